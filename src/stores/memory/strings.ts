/**
 * Strings as V8 keeps them, for a store that holds millions: a substring of 13 or more
 * characters is a view that keeps its whole parent (a request body, an NDJSON file) alive.
 */

/** Up to this length a copy is made from the text's code units; a longer text goes through JSON. */
const UNITS_COPIED = 256;
const units: number[] = [];

/**
 * A copy that shares nothing with `text`'s parent, for a string the store keeps for good. Every
 * row written copies its id (bench/store.ts, target 8: bulk load): a string made from the code
 * units is one new string, where `JSON.stringify` and `JSON.parse` make two and parse one.
 */
export function detached(text: string): string {
  if (text.length > UNITS_COPIED) return JSON.parse(JSON.stringify(text)) as string;
  // setting an array's length is a call into the runtime, and most of the texts copied are ids of one length
  if (units.length !== text.length) units.length = text.length;
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return String.fromCharCode.apply(null, units);
}
