import type { SqlDriver } from "./driver.js";
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
export declare function migrate(driver: SqlDriver): Promise<number>;
