/**
 * Webhooks: what subscribed endpoints cost the create path, and how fast the dispatcher
 * delivers. The store is a libSQL file (`--memory`: the memory store); the receiver is a
 * node:http server in a process of its own, answering 204 at once.
 *
 * - Creates through the handler in process (16 at a time) with the dispatcher running as
 *   `formsink serve` runs it: with no endpoint, then with two endpoints subscribed to every
 *   event (their deliveries going out meanwhile). Rounds alternate; best of 3 each.
 * - The dispatcher's `runOnce` on a backlog of events, to one endpoint and to four.
 *
 *   node --import tsx bench/webhooks.ts [--quick] [--memory]     (--quick: a fifth of the events)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWebhookTransport } from "../adapters/webhook-transport.ts";
import { createApiKey } from "../src/auth/keys.ts";
import { createSubmissionsHandler } from "../src/handler.ts";
import { type CompleteStore, isWebhookStore, type WebhookRecord, type WebhookStore } from "../src/store.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import { createMemoryStore } from "../src/stores/memory.ts";
import type { Submission } from "../src/submission.ts";
import { createWebhookDispatcher } from "../src/webhooks/dispatcher.ts";
import { reportTargets } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const memory = process.argv.includes("--memory");
const CREATES = quick ? 2_000 : 10_000;
const BACKLOG = quick ? 4_000 : 20_000;
const CONCURRENT_CREATES = 16;

const RECEIVER = `
const server = require("node:http").createServer((request, response) => {
  request.resume();
  request.on("end", () => response.writeHead(204).end());
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;

async function startReceiver(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) => child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())));
  return { url: `http://127.0.0.1:${port}/hooks`, stop: () => child.kill() };
}

const dir = mkdtempSync(join(tmpdir(), "formsink-bench-webhooks-"));
let files = 0;
async function openStore(): Promise<CompleteStore & WebhookStore> {
  const store = memory ? createMemoryStore() : await createLibsqlStore({ url: `file:${join(dir, `webhooks-${++files}.db`)}` });
  if (!isWebhookStore(store)) throw new Error("this store keeps no webhooks");
  return store as CompleteStore & WebhookStore;
}

function endpoint(url: string, n: number): WebhookRecord {
  return {
    webhookId: `wh_bench_${n}`, url, types: null, popupId: null, description: null, createdAt: new Date().toISOString(), disabledAt: null,
    secrets: [`whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`], previousSecretExpiresAt: null, failingSince: null,
  };
}

const body = (i: number) => JSON.stringify({ popupId: `popup_${i % 5}`, data: { email: `visitor${i}@example.com`, name: `Visitor ${i}`, consent: i % 3 !== 0 } });

/** Creates per second with `endpoints` endpoints subscribed, the dispatcher delivering meanwhile; waits for the deliveries after. */
async function createRate(store: CompleteStore & WebhookStore, key: string, accountId: string, receiverUrl: string, endpoints: number, round: number): Promise<number> {
  for (let n = 0; n < endpoints; n++) await store.insertWebhook(accountId, endpoint(receiverUrl, round * 10 + n));
  const transport = createWebhookTransport({ allowPrivate: true });
  const dispatcher = createWebhookDispatcher(store, { transport });
  const handler = createSubmissionsHandler(store, { onChange: dispatcher.wake });
  dispatcher.start();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CREATES }, async () => {
      while (next < CREATES) {
        const i = next++;
        const response = await handler(
          new Request("http://bench.test/api/submission", { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: body(i) }),
        );
        if (response.status !== 201) throw new Error(`create answered ${response.status}`);
      }
    }),
  );
  const rate = CREATES / ((performance.now() - started) / 1000);
  await dispatcher.stop();
  await dispatcher.runOnce();
  transport.close();
  for (const hook of await store.listWebhooks(accountId)) await store.deleteWebhook(accountId, hook.webhookId);
  return rate;
}

/** Deliveries per second of one `runOnce` through a backlog of BACKLOG events to `endpoints` endpoints. */
async function deliveryRate(receiverUrl: string, endpoints: number): Promise<number> {
  const store = await openStore();
  const accountId = "bench";
  for (let n = 0; n < endpoints; n++) await store.insertWebhook(accountId, endpoint(receiverUrl, n));
  const perEndpoint = Math.round(BACKLOG / endpoints);
  for (let from = 0; from < perEndpoint; from += 5000) {
    await store.importSubmissions(accountId, Array.from({ length: Math.min(5000, perEndpoint - from) }, (_, i) => submission(from + i)));
  }
  const transport = createWebhookTransport({ allowPrivate: true });
  const started = performance.now();
  const made = await createWebhookDispatcher(store, { transport }).runOnce();
  const rate = made / ((performance.now() - started) / 1000);
  if (made !== perEndpoint * endpoints) throw new Error(`made ${made} attempts, expected ${perEndpoint * endpoints}`);
  transport.close();
  await store.close();
  return rate;
}

function submission(i: number): Submission {
  return {
    submissionId: crypto.randomUUID(), popupId: `popup_${i % 5}`, data: { email: `visitor${i}@example.com`, name: `Visitor ${i}` }, domain: "example.com",
    userAgent: "Mozilla/5.0", device: "desktop", status: "pending", createdAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
  };
}

const receiver = await startReceiver();
try {
  const store = await openStore();
  const { key, record } = await createApiKey(store, { account: "bench", kind: "secret" });
  const best = { none: 0, two: 0 };
  for (let round = 0; round < 3; round++) {
    best.none = Math.max(best.none, await createRate(store, key, record.accountId, receiver.url, 0, round));
    best.two = Math.max(best.two, await createRate(store, key, record.accountId, receiver.url, 2, round));
  }
  await store.close();
  const share = best.two / best.none;
  console.log(`creates (${memory ? "memory" : "libSQL file"}, ${CONCURRENT_CREATES} at a time): ${Math.round(best.none).toLocaleString("en-US")}/s without endpoints, ${Math.round(best.two).toLocaleString("en-US")}/s with two subscribed (${Math.round(share * 100)}%)`);

  const one = await deliveryRate(receiver.url, 1);
  const four = await deliveryRate(receiver.url, 4);
  console.log(`dispatcher, ${BACKLOG.toLocaleString("en-US")} deliveries: ${Math.round(one).toLocaleString("en-US")}/s to one endpoint, ${Math.round(four).toLocaleString("en-US")}/s to four`);
  const store_ = memory ? "memory" : "libsql";
  reportTargets([
    {
      target: "webhooks-create", what: `${store_}: creates with two endpoints subscribed, share of none`,
      measured: `${Math.round(share * 100)}% (${Math.round(best.two).toLocaleString("en-US")} vs ${Math.round(best.none).toLocaleString("en-US")}/s)`, goal: ">= 90%", met: share >= 0.9,
    },
    {
      target: "webhooks-deliver", what: `${store_}: dispatcher deliveries to one local endpoint`,
      measured: `${Math.round(one).toLocaleString("en-US")}/s (four endpoints: ${Math.round(four).toLocaleString("en-US")}/s)`, goal: ">= 1,000/s", met: one >= 1000,
    },
  ]);
} finally {
  receiver.stop();
  rmSync(dir, { recursive: true, force: true });
}
