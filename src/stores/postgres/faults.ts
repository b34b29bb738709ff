/**
 * What the PostgreSQL store answers when the database cannot: a storage fault becomes
 * `StoreUnavailable` (503, or 507 when the disk is full), so a client retries later instead of
 * getting a bare 500, and no request waits longer than the store's time limit.
 */
import { StoreUnavailable } from "../../store.ts";

/** Codes of the postgres package's own connection errors (no server involved). */
const CONNECTION_ERRORS = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * SQLSTATE classes and codes that are the database's state, not the request's fault: 08
 * (connection exception), 53 (insufficient resources), 57 (operator intervention: shutdown,
 * restart, a cancelled statement), 40 (a transaction rolled back for a deadlock or
 * serialisation failure), 55P03 (lock not available), 25006 (a read-only replica).
 */
function faultOf(error: unknown): StoreUnavailable | undefined {
  if (error instanceof StoreUnavailable) return error;
  const { code } = (error ?? {}) as { code?: unknown };
  if (typeof code !== "string") return undefined;
  const cause = { cause: error };
  if (code === "53100") return new StoreUnavailable("full", "the database is out of disk space", cause);
  if (code === "25006") return new StoreUnavailable("read-only", "the database is read-only", cause);
  if (code === "57014") return new StoreUnavailable("busy", "the database did not answer in time", cause);
  if (CONNECTION_ERRORS.has(code) || /^(08|53|57|40)/.test(code) || code === "55P03") {
    return new StoreUnavailable("busy", "the database is unreachable or restarting", cause);
  }
  return undefined;
}

/** `error` as a `StoreUnavailable` when it is a storage fault, else as it is. */
export function storageFault(error: unknown): unknown {
  return faultOf(error) ?? error;
}

/**
 * Runs `operation`, answering `StoreUnavailable` for a storage fault and when it has not
 * settled within `timeoutMs` (the statement may still finish on the server: the caller was told
 * the outcome is unknown, as with any 503).
 */
export function withinTime<T>(timeoutMs: number, operation: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new StoreUnavailable("busy", "the database did not answer in time")), timeoutMs);
    operation().then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(storageFault(error));
      },
    );
  });
}
