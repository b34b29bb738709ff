/**
 * An HTTP target that serves the handler with a runtime's server adapter and sends every
 * request over a real socket. Runtime-agnostic: Node, Bun and Deno each pass their `serve`.
 */
import type { RunningServer } from "../../adapters/server.ts";
import type { FetchHandler, StartHttpTarget } from "./suite.ts";

export type Serve = (handler: FetchHandler, options: { port: number }) => Promise<RunningServer>;

export function overSocket(serve: Serve): StartHttpTarget {
  return async (handler) => {
    const server = await serve(handler, { port: 0 });
    return {
      async send(request) {
        const url = new URL(request.url);
        const body = request.body === null ? undefined : await request.arrayBuffer();
        return fetch(new URL(url.pathname + url.search, server.url), {
          method: request.method,
          headers: request.headers,
          body,
          redirect: "manual",
        });
      },
      stop: () => server.close(),
    };
  };
}
