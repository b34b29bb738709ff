/** The `RateLimitCounters` contract as tests. */
import type { RateLimitCounters } from "../store.ts";
import { assert } from "./assert.ts";
import { T0 } from "./fixtures.ts";
import { storeTests, type StoreSuiteOptions } from "./suite.ts";

/** Registers the tests of `RateLimitCounters` with your runner's `test`. */
export function testRateLimitCounters<S extends RateLimitCounters & { close(): Promise<void> }>(options: StoreSuiteOptions<S>): void {
  const test = storeTests(options);

  test("countRateLimitHit: counts per bucket within a window, and a new window starts again at 1", async (store) => {
    const minute = 60_000;
    const counts = [];
    for (let i = 0; i < 4; i++) counts.push(await store.countRateLimitHit("key-a|1.2.3.4", T0, T0 + minute));
    assert.equal(counts, [1, 2, 3, 4]);
    assert.is(await store.countRateLimitHit("key-a|5.6.7.8", T0, T0 + minute), 1);
    assert.is(await store.countRateLimitHit("key-b|1.2.3.4", T0, T0 + minute), 1);
    assert.is(await store.countRateLimitHit("key-a|1.2.3.4", T0 + minute, T0 + 2 * minute), 1);
    assert.is(await store.countRateLimitHit("key-a|1.2.3.4", T0 + minute, T0 + 2 * minute), 2);
    // an instance whose clock is behind counts into the newer window rather than resetting it
    assert.is(await store.countRateLimitHit("key-a|1.2.3.4", T0, T0 + minute), 3);
    assert.is(await store.countRateLimitHit("key-a|1.2.3.4", T0 + minute, T0 + 2 * minute), 4);
    // windows of other lengths live side by side
    assert.is(await store.countRateLimitHit("hourly|1.2.3.4", T0, T0 + 60 * minute), 1);
    assert.is(await store.countRateLimitHit("key-b|1.2.3.4", T0 + 5 * minute, T0 + 6 * minute), 1);
    assert.is(await store.countRateLimitHit("hourly|1.2.3.4", T0, T0 + 60 * minute), 2);
    // one-second windows, one after the other
    for (const second of [0, 1, 2]) {
      const start = T0 + 10 * minute + second * 1000;
      assert.is(await store.countRateLimitHit("per-second", start, start + 1000), 1, `second ${second}`);
      assert.is(await store.countRateLimitHit("per-second", start, start + 1000), 2, `second ${second}`);
    }
  });

  test("countRateLimitHit: concurrent hits each get their own count", async (store) => {
    const counts = await Promise.all(Array.from({ length: 25 }, () => store.countRateLimitHit("busy", T0, T0 + 60_000)));
    assert.equal([...counts].sort((a, b) => a - b), Array.from({ length: 25 }, (_, i) => i + 1));
  });
}
