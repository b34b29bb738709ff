/** What every store suite takes: your runner's `test` and a way to open a fresh store. */

/**
 * A test runner's way to register a test: node:test's `test`, vitest's or bun:test's `it`, an
 * uvu suite. Each test's function resolves when it passed and rejects when it failed.
 */
export type RegisterTest = (name: string, run: () => Promise<void>) => unknown;

export interface StoreSuiteOptions<S> {
  test: RegisterTest;
  /**
   * A new, empty store for one test; the suite closes it after the test. Wrap `close` to also
   * remove what the store left behind (a temporary file, a server).
   */
  open: () => Promise<S>;
}

/** `test(name, body)` that runs `body` on a store opened for it and closed after it, pass or fail. */
export function storeTests<S extends { close(): Promise<void> }>(options: StoreSuiteOptions<S>) {
  return (name: string, body: (store: S) => Promise<void>): void => {
    options.test(name, async () => {
      const store = await options.open();
      try {
        await body(store);
      } finally {
        await store.close();
      }
    });
  };
}
