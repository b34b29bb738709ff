import type { SqlDriver } from "./driver.ts";
import { MIGRATIONS } from "./migrations.ts";

/** The schema version this build of formsink writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * What one `migrate` call did: `from` is the version before the first migration it applied,
 * `to` the version it left; equal when it applied none (the schema was current, or another
 * process upgraded it meanwhile).
 */
export interface SchemaUpgrade {
  from: number;
  to: number;
}

/**
 * Brings the database to the newest schema version. Idempotent, and safe when several
 * processes open the same database at once.
 *
 * Each migration runs in one write batch that starts by recording its version, whose primary
 * key makes the record a lock: of two processes applying the same version, the second one's
 * batch fails on that insert and rolls back whole, and it then finds the version applied.
 * Batches, not interactive transactions: every driver has them (D1 and libSQL over HTTP have
 * nothing else).
 */
export async function migrate(driver: SqlDriver): Promise<SchemaUpgrade> {
  await driver.execute({
    sql: "CREATE TABLE IF NOT EXISTS formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
  });
  let from: number | undefined;
  for (;;) {
    const current = await schemaVersion(driver);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `database schema version ${current} is newer than this formsink knows (${SCHEMA_VERSION}): ` +
          "it was written by a newer formsink; upgrade formsink",
      );
    }
    if (current === SCHEMA_VERSION) return { from: from ?? current, to: current };
    const next = current + 1;
    try {
      await driver.batch(
        [
          { sql: "INSERT INTO formsink_migrations (version, applied_at) VALUES (?, ?)", args: [next, new Date().toISOString()] },
          ...MIGRATIONS[next - 1]!.map((sql) => ({ sql })),
        ],
        "write",
      );
      from ??= current;
    } catch (error) {
      // Lost the race to another process: fine if it applied this version, a real error if not.
      if ((await schemaVersion(driver)) < next) throw error;
    }
  }
}

async function schemaVersion(driver: SqlDriver): Promise<number> {
  const { rows } = await driver.execute({ sql: "SELECT COALESCE(MAX(version), 0) AS version FROM formsink_migrations" });
  return Number(rows[0]?.version ?? 0);
}
