/**
 * The HTTP contract against `Bun.serve` (adapters/bun.ts) on libSQL and on PostgreSQL (a throwaway
 * cluster: test/support/postgres.ts), the typed client against it, and the libSQL store under Bun.
 */
import { serve } from "../../../adapters/bun.ts";
import { createLibsqlStore } from "../../../src/stores/libsql/index.ts";
import { clientTarget } from "../../client/server-target.ts";
import { clientSuite } from "../../client/suite.ts";
import { overSocket } from "../../http/over-socket.ts";
import { httpSuite } from "../../http/suite.ts";
import { testCompleteStore } from "../../stores/complete-store.ts";
import { stopClusterAfterSuites, storeOnNewDatabase } from "../../support/postgres.ts";

httpSuite("bun server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
httpSuite("bun server, PostgreSQL", overSocket(serve), { createStore: () => storeOnNewDatabase() });
testCompleteStore("libSQL :memory: under Bun", (options) => createLibsqlStore({ url: ":memory:", ...options }));
clientSuite("bun server", clientTarget(serve));
stopClusterAfterSuites();
