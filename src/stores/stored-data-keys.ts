/**
 * The data keys (account, popup, key) a store has seen committed to its key list
 * (`submission_data_keys`), which is never shrunk: a create leaves out the keys it finds here,
 * so that most creates, whose keys their popup has used before, write none (bench/http.ts and
 * bench/postgres.ts, durable create). A store remembers keys only after the commit that wrote
 * them; a key another server wrote is written once more and skipped by the table's primary key,
 * as before. Bounded: a store that has seen more forgets them all and learns them again. The SQL
 * and PostgreSQL stores share it.
 */

/** How many data keys `storedDataKeys` remembers before it starts again from none. */
const REMEMBERED_DATA_KEYS = 50_000;

export interface StoredDataKeys {
  has(accountId: string, popupId: string, key: string): boolean;
  /** Keys of each popup (by popup id) that a commit has just written for `accountId`. */
  add(accountId: string, keys: ReadonlyMap<string, Iterable<string>>): void;
}

export function storedDataKeys(): StoredDataKeys {
  // By account, then popup, then key: a lookup makes and hashes no string of its own
  // (bench/http.ts, create: a create asks for each of its keys).
  let remembered = new Map<string, Map<string, Set<string>>>();
  let size = 0;
  return {
    has: (accountId, popupId, key) => remembered.get(accountId)?.get(popupId)?.has(key) ?? false,
    add(accountId, keys) {
      for (const [popupId, popupKeys] of keys) {
        for (const key of popupKeys) {
          if (size >= REMEMBERED_DATA_KEYS) {
            remembered = new Map();
            size = 0;
          }
          let popups = remembered.get(accountId);
          if (popups === undefined) remembered.set(accountId, (popups = new Map()));
          let known = popups.get(popupId);
          if (known === undefined) popups.set(popupId, (known = new Set()));
          if (!known.has(key)) {
            known.add(key);
            size++;
          }
        }
      }
    },
  };
}
