/**
 * The HTTP contract and webhook delivery against `Deno.serve` (adapters/deno.ts) on libSQL and on
 * PostgreSQL (a throwaway cluster: test/support/postgres.ts), the typed client against it, and
 * the libSQL store under Deno.
 */
import { createWebhookTransport, serve } from "../../../adapters/deno.ts";
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

httpSuite("deno server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
httpSuite("deno server, PostgreSQL", overSocket(serve), { createStore: () => storeOnNewDatabase() });
webhookDeliverySuite("deno server, memory store", overSocket(serve), async () => createMemoryStore(), createWebhookTransport);
const openLibsql = (options?: SqlStoreOptions) => createLibsqlStore({ url: ":memory:", ...options });
testCompleteStore("libSQL :memory: under Deno", openLibsql);
clientSuite("deno server", clientTarget(serve));
gracefulCloseSuite("deno server", serve);
resolvedAddressSuite("deno");
stopClusterAfterSuites();
