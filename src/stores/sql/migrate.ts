import type { SqlDriver } from "./driver.ts";
import { MIGRATIONS } from "./migrations.ts";

/** The schema version this build of formsink writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * What one `migrate` call did: `from` is the version it found and upgraded, `to` the version it
 * left; equal when it applied nothing (the schema was current, or another process upgraded it).
 */
export interface SchemaUpgrade {
  from: number;
  to: number;
}

/**
 * Brings the database to the newest schema version. Idempotent, and safe when several
 * processes open the same database at once.
 *
 * Every pending migration runs in one write batch that starts by recording their versions, whose
 * primary key makes the records a lock: of two processes upgrading the same database, the second
 * one's batch fails on those inserts and rolls back whole, and it then finds the upgrade done. So
 * one process does the whole upgrade, and an upgrade that fails leaves the version it started
 * from. Batches, not interactive transactions: every driver has them (D1 and libSQL over HTTP
 * have nothing else).
 */
export async function migrate(driver: SqlDriver): Promise<SchemaUpgrade> {
  // Read first: a current schema needs no write, so a database another process holds the write
  // lock of (an import, an operator's sqlite3 session) still opens for reads (a server, an
  // export, `keys list`); CREATE TABLE IF NOT EXISTS is a write and waits for that lock.
  let current = await schemaVersion(driver).catch(async () => {
    await driver.execute({ sql: "CREATE TABLE IF NOT EXISTS formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)" });
    return 0;
  });
  for (;;) {
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `database schema version ${current} is newer than this formsink knows (${SCHEMA_VERSION}): ` +
          "it was written by a newer formsink; upgrade formsink",
      );
    }
    if (current === SCHEMA_VERSION) return { from: current, to: current };
    const appliedAt = new Date().toISOString();
    const pending = MIGRATIONS.slice(current).flatMap((statements, i) => [
      { sql: "INSERT INTO formsink_migrations (version, applied_at) VALUES (?, ?)", args: [current + i + 1, appliedAt] },
      ...statements.map((sql) => ({ sql })),
    ]);
    try {
      await driver.batch(pending, "write");
      return { from: current, to: SCHEMA_VERSION };
    } catch (error) {
      // Lost the race to another process: fine if it upgraded past `current`, a real error if not.
      const upgraded = await schemaVersion(driver);
      if (upgraded === current) throw error;
      current = upgraded;
    }
  }
}

async function schemaVersion(driver: SqlDriver): Promise<number> {
  const { rows } = await driver.execute({ sql: "SELECT COALESCE(MAX(version), 0) AS version FROM formsink_migrations" });
  return Number(rows[0]?.version ?? 0);
}
