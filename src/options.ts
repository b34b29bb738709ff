import type { Authenticate } from "./auth/principal.ts";
import type { DataLimits } from "./data-limits.ts";
import type { ClientAddressSource } from "./rate-limit/client-address.ts";
import type { RateLimitOptions } from "./rate-limit/settings.ts";

export interface Limits extends DataLimits {
  /** Largest request body accepted, in bytes; larger ones get 413 while they stream in. */
  maxBodyBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 64 * 1024,
  maxDataFields: 100,
  maxDataKeyLength: 128,
  maxDataDepth: 4,
};

/**
 * The handler's limits: each given one checked, each left out or given as `undefined` (a host
 * app's own setting left unset) the default, never no limit at all.
 */
export function handlerLimits(given: Partial<Limits> = {}): Limits {
  const limits = { ...DEFAULT_LIMITS };
  for (const name of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const value: unknown = given[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new TypeError(`limits.${name} must be a whole number of at least 1 (got ${String(value)})`);
    }
    limits[name] = value;
  }
  return limits;
}

export const DEFAULT_HEALTH_TIMEOUT_MS = 2000;

/** One line of the request log: never the key, the query string or the body. */
export interface RequestLogEntry {
  type: "request";
  /** The `x-request-id` the request came with (when plausible) or a fresh one; echoed on the answer. */
  requestId: string;
  method: string;
  path: string;
  /** The pattern of the route that matched, base path included (`/api/submission/:submissionId`); undefined when none did. */
  route: string | undefined;
  status: number;
  durationMs: number;
}

/** An unexpected failure behind a 500: the details go here, never into the response. */
export interface ErrorLogEntry {
  type: "error";
  requestId: string;
  method: string;
  path: string;
  error: unknown;
}

/** A mistake in how the host app calls the handler: said once, `error.message` names the fix. */
export interface WarningLogEntry {
  type: "warning";
  method: string;
  path: string;
  error: Error;
}

export type LogEntry = RequestLogEntry | ErrorLogEntry | WarningLogEntry;

export interface SubmissionsHandlerOptions {
  /** Where the API is mounted in the host app, e.g. `/forms`. Default: `""`. */
  basePath?: string;
  /**
   * Replaces the store's own key lookup, for host apps that have a key system of their own;
   * required for a store that keeps no keys (no `KeyStore`).
   */
  authenticate?: Authenticate;
  limits?: Partial<Limits>;
  /**
   * Rate limits on creates, per key and client address: 30 per minute for publishable keys,
   * none for secret keys, counted in memory, unless set here.
   */
  rateLimit?: RateLimitOptions;
  /**
   * Where a request's client address comes from. Default: the connection's address, which the
   * adapter passes as `handler(request, { clientAddress })`. Behind reverse proxies, use
   * `forwardedForAddress(numberOfProxies)`; X-Forwarded-For is never believed by default.
   */
  clientAddress?: ClientAddressSource;
  /**
   * How long `GET /api/health` waits for the store before answering 503, in milliseconds.
   * Default: 2000.
   */
  healthTimeoutMs?: number;
  /** The most webhook endpoints one account may have. Default: 20. */
  maxWebhooksPerAccount?: number;
  /**
   * Lets webhook endpoints be `http` URLs or name private and loopback addresses, for local
   * work; by default creating one is 400. Give the dispatcher the same setting: it checks
   * every delivery after DNS resolution. Default: false.
   */
  allowPrivateWebhooks?: boolean;
  /**
   * Receives one entry per request, one per unexpected error, and a warning the first time the
   * host app's way of calling the handler defeats a feature (no client address for rate limits).
   * Default: nothing is logged but that warning, which goes to console.warn.
   */
  log?: (entry: LogEntry) => void;
  /**
   * Called after each request that may have changed data (a write that succeeded), once its
   * change is committed: pass a webhook dispatcher's `wake`, so that deliveries go out at once.
   */
  onChange?: () => void;
}

/** True for a request that may have changed data: not a read, and answered with success. */
export function mayHaveChanged(method: string, status: number): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "OPTIONS" && status < 400;
}
