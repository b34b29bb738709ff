/**
 * A host app that calls the handler without a client address (a Hono or Next.js route passing
 * only the request) puts every visitor in one rate-limit bucket, and a busy site then refuses
 * its real visitors. That is said once per handler, with the fix, the first time it matters.
 */
import type { LogEntry } from "../options.ts";

export const UNKNOWN_CLIENT_ADDRESS_WARNING =
  "formsink: a rate-limited create came without a client address, so every client shares one rate-limit budget. " +
  "Pass the address the host framework knows: handler(request, { clientAddress }) (formsink's own adapters do), " +
  "or set the clientAddress option (forwardedForAddress(n) behind n trusted proxies); see docs/host-apps.md";

/** Reports the missing address once: through `log` when the host app gave one, else console.warn. */
export function unknownAddressWarning(log: ((entry: LogEntry) => void) | undefined): (method: string, path: string) => void {
  let warned = false;
  return (method, path) => {
    if (warned) return;
    warned = true;
    if (log) log({ type: "warning", method, path, error: new Error(UNKNOWN_CLIENT_ADDRESS_WARNING) });
    else console.warn(UNKNOWN_CLIENT_ADDRESS_WARNING);
  };
}
