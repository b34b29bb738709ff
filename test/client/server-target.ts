/**
 * A real formsink server for the client suite, served by a runtime's adapter on a socket with
 * a libSQL :memory: store. Runtime-agnostic: Node, Bun and Deno each pass their `serve`.
 */
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import type { Serve } from "../http/over-socket.ts";
import type { StartClientTarget } from "./suite.ts";

export function clientTarget(serve: Serve): StartClientTarget {
  return async ({ basePath }) => {
    const store = await createLibsqlStore({ url: ":memory:" });
    const server = await serve(createSubmissionsHandler(store, { basePath }), { port: 0 });
    let accounts = 0;
    return {
      baseUrl: `${server.url}${basePath}`,
      async newAccount() {
        const { key, record } = await createApiKey(store, { account: `client-${++accounts}` });
        return { key, insert: async (rows) => void (await store.importSubmissions(record.accountId, rows)) };
      },
      async stop() {
        await server.close();
        await store.close();
      },
    };
  };
}
