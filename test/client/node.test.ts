/** The typed client against the Node server, on a real socket, with and without a base path. */
import { serve } from "../../adapters/node.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { clientSuite, type StartClientTarget } from "./suite.ts";

const nodeServer: StartClientTarget = async ({ basePath }) => {
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

clientSuite("node server", nodeServer);
clientSuite("node server under /forms", nodeServer, { basePath: "/forms" });
