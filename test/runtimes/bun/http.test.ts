/**
 * The HTTP contract and webhook delivery against `Bun.serve` (adapters/bun.ts) on libSQL and on
 * PostgreSQL (a throwaway cluster: test/support/postgres.ts), the typed client against it, and
 * the libSQL store under Bun.
 */
import { createWebhookTransport, serve } from "../../../adapters/bun.ts";
import { createLibsqlStore } from "../../../src/stores/libsql/index.ts";
import { createMemoryStore } from "../../../src/stores/memory.ts";
import type { SqlStoreOptions } from "../../../src/stores/sql/store.ts";
import { clientTarget } from "../../client/server-target.ts";
import { clientSuite } from "../../client/suite.ts";
import { gracefulCloseSuite } from "../../http/close-suite.ts";
import { overSocket } from "../../http/over-socket.ts";
import { httpSuite } from "../../http/suite.ts";
import { webhookDeliverySuite } from "../../http/webhook-delivery-suite.ts";
import { testCompleteStore } from "../../stores/complete-store.ts";
import { stopClusterAfterSuites, storeOnNewDatabase } from "../../support/postgres.ts";
import { resolvedAddressSuite } from "../../webhooks/resolved-address-suite.ts";

httpSuite("bun server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
httpSuite("bun server, PostgreSQL", overSocket(serve), { createStore: () => storeOnNewDatabase() });
webhookDeliverySuite("bun server, memory store", overSocket(serve), async () => createMemoryStore(), createWebhookTransport);
const openLibsql = (options?: SqlStoreOptions) => createLibsqlStore({ url: ":memory:", ...options });
testCompleteStore("libSQL :memory: under Bun", openLibsql);
clientSuite("bun server", clientTarget(serve));
gracefulCloseSuite("bun server", serve);
resolvedAddressSuite("bun");
stopClusterAfterSuites();
