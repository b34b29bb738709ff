/**
 * Records kept for as long as the database has not changed: a lookup asks the driver's
 * `changeVersion` (SQLite's `PRAGMA data_version` on a file) and answers with the record it
 * read before when no write has been committed since, by any connection or process; otherwise
 * it reads the record again. A revocation committed before a request is therefore seen by
 * that request, as with a read of its own. A key that was not found is not kept, so unknown
 * keys cannot fill the memory; a driver that cannot tell when the database changed reads
 * every time.
 */
import type { SqlDriver } from "./driver.ts";

/** Records kept, at most; past that, they are all read again. */
const MAX_KEPT = 1000;

// bench/http.ts (list and get): the key's record, read for every request, was the largest
// statement of a get after the submission's own row; asking whether anything changed costs
// the binding less than that read and its row's values.
/** `read`, answered from what it read before while the database is unchanged. */
export function keptUntilChange<K, V>(driver: SqlDriver, read: (key: K) => Promise<V | undefined>): (key: K) => Promise<V | undefined> {
  const changeVersion = driver.changeVersion?.bind(driver);
  if (changeVersion === undefined) return read;
  const kept = new Map<K, { version: number; value: V }>();
  return async (key) => {
    let version: number;
    try {
      version = changeVersion();
    } catch {
      // A version that cannot be read now (another process's lock): read the record as before.
      kept.delete(key);
      return read(key);
    }
    const known = kept.get(key);
    if (known !== undefined && known.version === version) return known.value;
    // Asked before the read: a write committed in between makes the record read again next time.
    const value = await read(key);
    if (value === undefined) {
      kept.delete(key);
    } else {
      if (kept.size >= MAX_KEPT) kept.clear();
      kept.set(key, { version, value });
    }
    return value;
  };
}
