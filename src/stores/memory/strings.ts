/**
 * Strings as V8 keeps them, for a store that holds millions: `JSON.stringify` of a few hundred
 * characters returns a rope (a cons string over its growing parts, about twice the text's
 * size) until something reads it flat, and a substring of 13 or more characters is a view
 * that keeps its whole parent (a request body, an NDJSON file) alive.
 */

/** The same text, flattened now: converting it to a number reads it whole, which flattens it. */
export function flattened(text: string): string {
  Number(text);
  return text;
}

/** A copy that shares nothing with `text`'s parent, for a string the store keeps for good. */
export function detached(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}
