/**
 * Webhooks: what subscribed endpoints cost the create path, and how fast the dispatcher
 * delivers. The receiver is a node:http server in a process of its own, answering 204 at once.
 *
 * - Creates over HTTP (autocannon, 10 connections, pinned to core 1) against formsink on a
 *   libSQL file in a process of its own (core 0), its dispatcher running as `formsink serve`
 *   runs it: with no endpoint, then with two endpoints subscribed to every event, their
 *   deliveries going out from that process meanwhile. Rounds alternate; best of 3 each.
 * - The dispatcher's `runOnce` in this process (core 0) on a backlog of events, to one endpoint
 *   and to four, on a libSQL file (`--memory`: the memory store).
 *
 *   node --import tsx bench/webhooks.ts [--quick] [--memory]     (--quick: shorter rounds, a fifth of the events)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWebhookTransport } from "../adapters/webhook-transport.ts";
import { createApiKey } from "../src/auth/keys.ts";
import type { CompleteStore, WebhookRecord } from "../src/store.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import { createMemoryStore } from "../src/stores/memory.ts";
import type { Submission } from "../src/submission.ts";
import { createWebhookDispatcher } from "../src/webhooks/dispatcher.ts";
import { canPin, pinSelf, runLoad, startServerProcess, stopServerProcess } from "./support/load.ts";
import { reportTargets } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const memory = process.argv.includes("--memory");
const SECONDS = quick ? 3 : 10;
const BACKLOG = quick ? 4_000 : 20_000;

const RECEIVER = `
const server = require("node:http").createServer((request, response) => {
  request.resume();
  request.on("end", () => response.writeHead(204).end());
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;

async function startReceiver(): Promise<{ url: string; stop(): void }> {
  const node = [process.execPath, "-e", RECEIVER];
  const [command, ...args] = canPin() ? ["taskset", "-c", "1", ...node] : node;
  const child = spawn(command!, args, { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) => child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())));
  return { url: `http://127.0.0.1:${port}/hooks`, stop: () => child.kill() };
}

const dir = mkdtempSync(join(tmpdir(), "formsink-bench-webhooks-"));
let files = 0;
async function openStore(): Promise<CompleteStore> {
  return memory ? createMemoryStore() : await createLibsqlStore({ url: `file:${join(dir, `webhooks-${++files}.db`)}` });
}

function endpoint(url: string, n: number): WebhookRecord {
  return {
    webhookId: `wh_bench_${n}`, url, types: null, popupId: null, description: null, createdAt: new Date().toISOString(), disabledAt: null,
    secrets: [`whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`], previousSecretExpiresAt: null, failingSince: null,
  };
}

const CREATE_BODY = JSON.stringify({ popupId: "popup_1", data: { email: "visitor@example.com", name: "Visitor", consent: true } });

/** Creates per second over HTTP with `endpoints` endpoints subscribed (their deliveries going out meanwhile); waits for them after. */
async function createRate(serverUrl: string, key: string, receiverUrl: string, endpoints: number): Promise<number> {
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const added: string[] = [];
  for (let n = 0; n < endpoints; n++) {
    const answer = await fetch(`${serverUrl}/api/webhooks`, { method: "POST", headers, body: JSON.stringify({ url: receiverUrl }) });
    added.push(((await answer.json()) as { webhookId: string }).webhookId);
  }
  const load = await runLoad({ url: `${serverUrl}/api/submission`, method: "POST", headers, body: CREATE_BODY, durationSeconds: SECONDS });
  if (load.non2xx > 0 || load.errors > 0) throw new Error(`creates failed: ${load.non2xx} not 2xx, ${load.errors} errors`);
  for (const webhookId of added) {
    for (;;) {
      const answer = await fetch(`${serverUrl}/api/webhooks/${webhookId}/deliveries?status=pending&limit=1`, { headers });
      if (((await answer.json()) as { items: unknown[] }).items.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await fetch(`${serverUrl}/api/webhooks/${webhookId}`, { method: "DELETE", headers });
  }
  return load.requestsPerSecond;
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

pinSelf(1);
const receiver = await startReceiver();
try {
  const file = join(dir, "creates.db");
  const setup = await createLibsqlStore({ url: `file:${file}` });
  const { key } = await createApiKey(setup, { account: "bench", kind: "secret" });
  await setup.close();
  const server = await startServerProcess(new URL("./support/webhook-server.ts", import.meta.url), [file], 0);
  const best = { none: 0, two: 0 };
  try {
    for (let round = 0; round < 3; round++) {
      best.none = Math.max(best.none, await createRate(server.url, key, receiver.url, 0));
      best.two = Math.max(best.two, await createRate(server.url, key, receiver.url, 2));
    }
  } finally {
    await stopServerProcess(server.child);
  }
  const share = best.two / best.none;
  console.log(`Node ${process.version}; ${canPin() ? "server on core 0, load and receiver on core 1" : "taskset unavailable: not pinned"}; ${SECONDS} s per round`);
  console.log(`HTTP creates (libSQL file): ${Math.round(best.none).toLocaleString("en-US")}/s without endpoints, ${Math.round(best.two).toLocaleString("en-US")}/s with two subscribed (${Math.round(share * 100)}%)`);

  // The dispatcher alone now, on the core the server had.
  pinSelf(0);
  const one = await deliveryRate(receiver.url, 1);
  const four = await deliveryRate(receiver.url, 4);
  console.log(`dispatcher, ${BACKLOG.toLocaleString("en-US")} deliveries: ${Math.round(one).toLocaleString("en-US")}/s to one endpoint, ${Math.round(four).toLocaleString("en-US")}/s to four`);
  reportTargets([
    {
      target: "webhooks-create", what: "libsql: HTTP creates with two endpoints subscribed, share of none",
      measured: `${Math.round(share * 100)}% (${Math.round(best.two).toLocaleString("en-US")} vs ${Math.round(best.none).toLocaleString("en-US")}/s)`, goal: ">= 90%", met: share >= 0.9,
    },
    {
      target: "webhooks-deliver", what: `${memory ? "memory" : "libsql"}: dispatcher deliveries to one local endpoint`,
      measured: `${Math.round(one).toLocaleString("en-US")}/s (four endpoints: ${Math.round(four).toLocaleString("en-US")}/s)`, goal: ">= 1,000/s", met: one >= 1000,
    },
  ]);
} finally {
  receiver.stop();
  rmSync(dir, { recursive: true, force: true });
}
