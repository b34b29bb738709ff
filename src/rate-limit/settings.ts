import type { ApiKeyKind } from "../store.ts";
import { createMemoryRateLimiter, type RateLimiter, type RateLimitPolicy } from "./limiter.ts";

export interface RateLimitOptions {
  /** Creates with a publishable key, per key and client address. Default 30 per 60 s; `false` for none. */
  publishable?: RateLimitPolicy | false;
  /** Creates with a secret key (servers, importers), per key and client address. Default: none. */
  secret?: RateLimitPolicy | false;
  /**
   * Where hits are counted. Default: this process's memory. `storeRateLimiter(store)` counts in
   * the store, so that every instance on one database shares the limits.
   */
  limiter?: RateLimiter;
}

export const DEFAULT_PUBLISHABLE_RATE_LIMIT: RateLimitPolicy = { limit: 30, windowSeconds: 60 };

/** Rate limits as the handler applies them: a policy (or none) for each kind of key. */
export interface RateLimitSettings {
  policies: Record<ApiKeyKind, RateLimitPolicy | undefined>;
  limiter: RateLimiter;
}

export function rateLimitSettings(options: RateLimitOptions = {}): RateLimitSettings {
  const policy = (kind: ApiKeyKind, given: RateLimitPolicy | false | undefined, fallback: RateLimitPolicy | undefined) => {
    const chosen = given === false ? undefined : (given ?? fallback);
    if (chosen && !(isWhole(chosen.limit) && isWhole(chosen.windowSeconds))) {
      throw new TypeError(`rateLimit.${kind} needs a limit and windowSeconds that are whole numbers of at least 1`);
    }
    return chosen && { limit: chosen.limit, windowSeconds: chosen.windowSeconds };
  };
  return {
    policies: {
      publishable: policy("publishable", options.publishable, DEFAULT_PUBLISHABLE_RATE_LIMIT),
      secret: policy("secret", options.secret, undefined),
    },
    limiter: options.limiter ?? createMemoryRateLimiter(),
  };
}

function isWhole(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}
