/**
 * Strings as V8 keeps them, for a store that holds millions: a substring of 13 or more
 * characters is a view that keeps its whole parent (a request body, an NDJSON file) alive.
 */

/** A copy that shares nothing with `text`'s parent, for a string the store keeps for good. */
export function detached(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}
