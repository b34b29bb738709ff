/**
 * Bun adapter: `Bun.serve` runs the handler as it is (Bun speaks Request/Response natively);
 * this only adds the shared options and a graceful close.
 */
import {
  DEFAULT_HOSTNAME, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_PORT, type FetchHandler, internalError, reportError, type RunningServer,
  type ServeOptions, serverUrl, waitAtMost,
} from "./server.ts";

export type { FetchHandler, RunningServer, ServeOptions } from "./server.ts";
export { type ClosableWebhookTransport, createWebhookTransport, type WebhookTransportNodeOptions } from "./webhook-transport.ts";

export interface BunServer extends RunningServer {
  server: Bun.Server<undefined>;
}

export async function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<BunServer> {
  const onError = options.onError ?? reportError;
  // Bun's stop() does not wait for the handler of a request whose client went away; close() must.
  const handling = new Set<Promise<Response>>();
  const server = Bun.serve({
    port: options.port ?? DEFAULT_PORT,
    hostname: options.hostname ?? DEFAULT_HOSTNAME,
    idleTimeout: Math.min(255, Math.ceil((options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS) / 1000)),
    fetch(request, server) {
      const answer = handler(request, { clientAddress: server.requestIP(request)?.address });
      if (answer instanceof Promise) {
        handling.add(answer);
        const settled = () => void handling.delete(answer);
        answer.then(settled, settled);
      }
      return answer;
    },
    error(error) {
      onError(error);
      return internalError();
    },
  });
  return {
    server,
    url: serverUrl(server.hostname ?? DEFAULT_HOSTNAME, server.port ?? 0),
    async close(timeoutMs = 10_000) {
      await waitAtMost(server.stop().then(() => Promise.allSettled(handling)), timeoutMs, () => void server.stop(true));
    },
  };
}
