/**
 * Many values passed to SQLite as JSON arrays (read with `json_each`), cut so that no bound
 * value is too large: imports send their data keys and their events this way.
 */

/** Largest JSON value per statement: well under the 2 MB D1 allows for a value. */
const MAX_CHUNK_LENGTH = 512 * 1024;

/** JSON arrays of `entries` (each a JSON text), each at most MAX_CHUNK_LENGTH unless one entry is longer. */
export function jsonArrayChunks(entries: readonly string[]): string[] {
  const chunks: string[] = [];
  let chunk: string[] = [];
  let length = 0;
  for (const entry of entries) {
    if (chunk.length > 0 && length + entry.length > MAX_CHUNK_LENGTH) {
      chunks.push(`[${chunk.join(",")}]`);
      chunk = [];
      length = 0;
    }
    chunk.push(entry);
    length += entry.length + 1;
  }
  if (chunk.length > 0) chunks.push(`[${chunk.join(",")}]`);
  return chunks;
}
