/**
 * Deno adapter: `Deno.serve` runs the handler as it is; this only adds the shared options and
 * a graceful close. Run with `--allow-net --allow-env --allow-sys --allow-ffi` for the libSQL
 * store (README: what `--allow-ffi` means for the sandbox).
 */
import {
  DEFAULT_HOSTNAME, DEFAULT_PORT, type FetchHandler, internalError, reportError, type RunningServer,
  type ServeOptions, serverUrl, waitAtMost,
} from "./server.ts";

export type { FetchHandler, RunningServer, ServeOptions } from "./server.ts";
export { type ClosableWebhookTransport, createWebhookTransport, type WebhookTransportNodeOptions } from "./webhook-transport.ts";

export interface DenoServer extends RunningServer {
  server: Deno.HttpServer<Deno.NetAddr>;
}

export async function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<DenoServer> {
  const onError = options.onError ?? reportError;
  const server = Deno.serve(
    {
      port: options.port ?? DEFAULT_PORT,
      hostname: options.hostname ?? DEFAULT_HOSTNAME,
      onListen: () => {}, // Deno would print "Listening on ..." to stdout otherwise
      onError(error) {
        onError(error);
        return internalError();
      },
    },
    (request, info) => handler(request, { clientAddress: info.remoteAddr.hostname }),
  );
  return {
    server,
    url: serverUrl(server.addr.hostname, server.addr.port),
    async close(timeoutMs = 10_000) {
      // Deno has no way to cut connections short: after the timeout, stop waiting for them.
      await waitAtMost(server.shutdown(), timeoutMs);
    },
  };
}
