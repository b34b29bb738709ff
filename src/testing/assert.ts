/**
 * The few assertions the store suites make, so that the suites need no test library and run
 * wherever a store does (Node, Bun, Deno, workerd). A failure throws an Error whose message
 * shows both values; any runner reports a thrown error as a failed test.
 */

export class AssertionError extends Error {
  override name = "AssertionError";
}

function fail(message: string | undefined, detail: string): never {
  throw new AssertionError(message === undefined ? detail : `${message}: ${detail}`);
}

const show = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(value));

/** Same value (`Object.is`). */
function is(actual: unknown, expected: unknown, message?: string): void {
  if (!Object.is(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
}
is.not = (actual: unknown, unexpected: unknown, message?: string): void => {
  if (Object.is(actual, unexpected)) fail(message, `expected anything but ${show(unexpected)}`);
};

/** Deeply equal: same own keys and equal values, arrays in order; key order does not matter. */
function equal(actual: unknown, expected: unknown, message?: string): void {
  if (!deepEqual(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
}

function ok(value: unknown, message?: string): void {
  if (!value) fail(message, `expected a true value, got ${show(value)}`);
}

export const assert = { is, equal, ok };

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => deepEqual(item, other[i]));
  }
  const [x, y] = [a as Record<string, unknown>, b as Record<string, unknown>];
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((key) => Object.hasOwn(y, key) && deepEqual(x[key], y[key]));
}
