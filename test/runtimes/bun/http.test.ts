/** The HTTP contract against `Bun.serve` (adapters/bun.ts), the typed client against it, the libSQL store and a webhook delivery under Bun. */
import { serve } from "../../../adapters/bun.ts";
import { createLibsqlStore } from "../../../src/stores/libsql/index.ts";
import type { SqlStoreOptions } from "../../../src/stores/sql/store.ts";
import { clientTarget } from "../../client/server-target.ts";
import { clientSuite } from "../../client/suite.ts";
import { overSocket } from "../../http/over-socket.ts";
import { httpSuite } from "../../http/suite.ts";
import { testCompleteStore } from "../../stores/complete-store.ts";
import { webhookDeliverySuite } from "../../webhooks/runtime-suite.ts";

httpSuite("bun server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
const openLibsql = (options?: SqlStoreOptions) => createLibsqlStore({ url: ":memory:", ...options });
testCompleteStore("libSQL :memory: under Bun", openLibsql, openLibsql);
clientSuite("bun server", clientTarget(serve));
webhookDeliverySuite("bun");
