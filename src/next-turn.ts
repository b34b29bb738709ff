/** Node, Bun and Deno have `setImmediate`; a Worker has none. */
export const HAS_SET_IMMEDIATE = typeof (globalThis as { setImmediate?: unknown }).setImmediate === "function";

/**
 * Runs `run` once the current turn of the event loop is over: after every request that is
 * ready has had its turn (Node's, Bun's and Deno's `setImmediate`; elsewhere, as a Worker
 * has none, a zero timeout). What the store gathers meanwhile (writes for a group commit, key
 * lookups) is then done once for all of them; an export's next page waits for it (export.ts).
 */
export const nextTurn: (run: () => void) => void = HAS_SET_IMMEDIATE
  ? (run) => (globalThis as unknown as { setImmediate: (run: () => void) => void }).setImmediate(run)
  : (run) => setTimeout(run, 0);
