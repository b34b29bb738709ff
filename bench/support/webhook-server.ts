/**
 * The server for bench/webhooks.ts, in a process of its own: formsink on a libSQL file with the
 * webhook dispatcher running beside the handler as `formsink serve` runs it (woken by every
 * change), delivering to private addresses.
 * `node --import tsx bench/support/webhook-server.ts <database file>`; prints its URL on stdout.
 */
import { serve } from "../../adapters/node.ts";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { createWebhookDispatcher } from "../../src/webhooks/dispatcher.ts";

const store = await createLibsqlStore({ url: `file:${process.argv[2]}` });
const transport = createWebhookTransport({ allowPrivate: true });
const dispatcher = createWebhookDispatcher(store, { transport, onError: (error) => console.error("dispatcher:", error) });
const handler = createSubmissionsHandler(store, { onChange: dispatcher.wake, allowPrivateWebhooks: true });
const server = await serve(handler, { port: 0 });
dispatcher.start();
process.stdout.write(`${server.url}\n`);
process.once("SIGTERM", () => {
  void server.close().then(async () => {
    await dispatcher.stop();
    transport.close();
    await store.close();
  });
});
