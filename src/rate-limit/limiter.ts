/**
 * Rate limiting by fixed windows: a policy allows `limit` requests per `windowSeconds`, counted
 * in buckets (a key and a client address) by a `RateLimiter`. The in-memory one is the default;
 * `storeRateLimiter(store)` counts in a store's `RateLimitCounters`, so that every instance on
 * one database shares the limits.
 */
import type { RateLimitCounters } from "../store.ts";

export interface RateLimitPolicy {
  /** Requests allowed per window. */
  limit: number;
  windowSeconds: number;
}

export interface RateLimiter {
  /**
   * Adds one hit to `bucket` for the window [windowStart, windowEnd) (epoch milliseconds) and
   * returns the bucket's hits in that window, this one included; the contract of
   * `RateLimitCounters.countRateLimitHit`.
   */
  countHit(bucket: string, windowStart: number, windowEnd: number): Promise<number>;
}

interface Counter {
  windowStart: number;
  windowEnd: number;
  hits: number;
}

// Ended windows are dropped at most this often: a sweep walks every bucket.
const SWEEP_INTERVAL_MS = 60_000;

/** Counts in this process's memory: right for one instance, and the default. */
export function createMemoryRateLimiter(): RateLimiter {
  const counters = new Map<string, Counter>();
  let nextSweep = 0;
  return {
    async countHit(bucket, windowStart, windowEnd) {
      if (windowStart >= nextSweep) {
        for (const [name, counter] of counters) if (counter.windowEnd <= windowStart) counters.delete(name);
        nextSweep = windowStart + SWEEP_INTERVAL_MS;
      }
      const counter = counters.get(bucket);
      if (!counter || windowStart > counter.windowStart) {
        counters.set(bucket, { windowStart, windowEnd, hits: 1 });
        return 1;
      }
      return ++counter.hits;
    },
  };
}

/** Counts in the store: instances that share a database share their limits. */
export function storeRateLimiter(store: RateLimitCounters): RateLimiter {
  return { countHit: (bucket, windowStart, windowEnd) => store.countRateLimitHit(bucket, windowStart, windowEnd) };
}
