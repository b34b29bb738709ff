/**
 * The HTTP contract against `Deno.serve` (adapters/deno.ts) on libSQL and on PostgreSQL (a throwaway
 * cluster: test/support/postgres.ts), the typed client against it, and the libSQL store under Deno.
 */
import { serve } from "../../../adapters/deno.ts";
import { createLibsqlStore } from "../../../src/stores/libsql/index.ts";
import { clientTarget } from "../../client/server-target.ts";
import { clientSuite } from "../../client/suite.ts";
import { overSocket } from "../../http/over-socket.ts";
import { httpSuite } from "../../http/suite.ts";
import { testCompleteStore } from "../../stores/complete-store.ts";
import { stopClusterAfterSuites, storeOnNewDatabase } from "../../support/postgres.ts";

httpSuite("deno server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
httpSuite("deno server, PostgreSQL", overSocket(serve), { createStore: () => storeOnNewDatabase() });
testCompleteStore("libSQL :memory: under Deno", (options) => createLibsqlStore({ url: ":memory:", ...options }));
clientSuite("deno server", clientTarget(serve));
stopClusterAfterSuites();
