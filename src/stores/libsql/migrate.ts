import type { Client } from "@libsql/client";
import { MIGRATIONS } from "./migrations.ts";

/**
 * Brings the database to the newest schema version. Idempotent, and safe when several
 * processes open the same database at once.
 *
 * Each migration runs in one write batch that starts by recording its version, whose primary
 * key makes the record a lock: of two processes applying the same version, the second one's
 * batch fails on that insert and rolls back whole, and it then finds the version applied.
 * Batches (not interactive transactions) are used because every libSQL transport supports
 * them, including HTTP to a remote server.
 */
export async function migrate(client: Client): Promise<number> {
  await client.execute(
    "CREATE TABLE IF NOT EXISTS formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)",
  );
  for (;;) {
    const current = await schemaVersion(client);
    if (current > MIGRATIONS.length) {
      throw new Error(
        `database schema version ${current} is newer than this formsink knows (${MIGRATIONS.length}); upgrade formsink`,
      );
    }
    if (current === MIGRATIONS.length) return current;
    const next = current + 1;
    try {
      await client.batch(
        [
          { sql: "INSERT INTO formsink_migrations (version, applied_at) VALUES (?, ?)", args: [next, new Date().toISOString()] },
          ...MIGRATIONS[next - 1]!,
        ],
        "write",
      );
    } catch (error) {
      // Lost the race to another process: fine if it applied this version, a real error if not.
      if ((await schemaVersion(client)) < next) throw error;
    }
  }
}

async function schemaVersion(client: Client): Promise<number> {
  const { rows } = await client.execute("SELECT COALESCE(MAX(version), 0) AS version FROM formsink_migrations");
  return Number(rows[0]?.version ?? 0);
}
