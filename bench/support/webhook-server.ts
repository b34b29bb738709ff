/**
 * The server for bench/webhooks.ts, in a process of its own: formsink on a libSQL file with the
 * webhook dispatcher as `formsink serve` runs it: in a thread of its own on its own connection
 * (cli/webhook-thread.ts, running dist/'s bundled worker as serve does), woken by every change,
 * delivering to private addresses.
 * `--pin-dispatcher=<core>` pins that thread to a core (`taskset` on its thread id);
 * `--in-process`: the dispatcher beside the handler instead, as a library user may run it.
 * `node --import tsx bench/support/webhook-server.ts <database file> [--pin-dispatcher=<core>] [--in-process]`;
 * prints its URL on stdout.
 */
import { execFileSync } from "node:child_process";
import { serve } from "../../adapters/node.ts";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import { startWebhookThread } from "../../cli/webhook-thread.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { openDatabase } from "../../cli/database.ts";
import { threadWriteLock } from "../../src/stores/libsql/thread-write-lock.ts";
import { createWebhookDispatcher, DEFAULT_ENDPOINT_CONCURRENCY, DEFAULT_POLL_INTERVAL_MS } from "../../src/webhooks/dispatcher.ts";

const file = process.argv[2]!;
const pinTo = process.argv.find((arg) => arg.startsWith("--pin-dispatcher="))?.slice("--pin-dispatcher=".length);
const writeLock = threadWriteLock();
const store = await openDatabase(`file:${file}`, { env: {}, stderr: console.error, connection: { writeLock } });
const warn = (message: unknown) => console.error("dispatcher:", message);
let deliveries: { wake(): void; stop(): Promise<void> };
if (process.argv.includes("--in-process")) {
  const transport = createWebhookTransport({ allowPrivate: true });
  const dispatcher = createWebhookDispatcher(store, { transport, onError: warn });
  dispatcher.start();
  deliveries = { wake: dispatcher.wake, stop: () => dispatcher.stop().then(() => transport.close()) };
} else {
  const thread = startWebhookThread({
    url: `file:${file}`, env: {}, leaseMs: 60_000, endpointConcurrency: DEFAULT_ENDPOINT_CONCURRENCY, pollIntervalMs: DEFAULT_POLL_INTERVAL_MS, allowPrivate: true, writeLock: writeLock.buffer, warn, onDisabled: warn,
    // The built worker, as serve runs it: from this TypeScript, the thread would run src/ through tsx.
    workerModule: new URL("../../dist/cli/webhook-worker.js", import.meta.url),
  });
  const threadId = await thread.ready;
  if (pinTo !== undefined) {
    if (threadId === undefined) throw new Error("the dispatcher's thread id is unknown here: cannot pin it");
    execFileSync("taskset", ["-cp", pinTo, String(threadId)], { stdio: "ignore" });
  }
  deliveries = thread;
}
const handler = createSubmissionsHandler(store, { onChange: deliveries.wake, allowPrivateWebhooks: true });
const server = await serve(handler, { port: 0 });
process.stdout.write(`${server.url}\n`);
process.once("SIGTERM", () => {
  void server.close().then(async () => {
    await deliveries.stop();
    await store.close();
  });
});
