/**
 * The workerd test worker (bundled and started by ./run.ts in Miniflare). `GET /__run` runs,
 * inside workerd:
 * - the HTTP contract, each fixture's handler served by this worker: the suite's requests leave
 *   workerd and come back in through its HTTP server, sent by Node's fetch like any client's;
 * - the store conformance suite against Miniflare's local D1;
 * - the typed client, from inside workerd, against a handler on D1 that this worker serves;
 * - the Workers adapter itself (`formsink/workers`) with a D1 binding and with a remote libSQL
 *   database over HTTP, and its webhook deliveries to a receiver outside workerd.
 */
import { runQueuedSuites } from "./uvu-in-worker.ts";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWorker, type WorkerEnv } from "../../../adapters/workers.ts";
import { createApiKey } from "../../../src/auth/keys.ts";
import type { CompleteStore, WebhookStore } from "../../../src/store.ts";
import { createD1Store, type D1Database } from "../../../src/stores/d1/index.ts";
// What `formsink/libsql` resolves to in workerd (the package's "workerd" export condition).
import { createLibsqlStore } from "../../../src/stores/libsql/web.ts";
import { createSubmissionsHandler } from "../../../src/handler.ts";
import { clientSuite } from "../../client/suite.ts";
import { httpSuite, type FetchHandler, type StartHttpTarget } from "../../http/suite.ts";
import { testCompleteStore } from "../../stores/complete-store.ts";
import { createMemoryStore } from "../../../src/stores/memory.ts";
import { type ReceivedDelivery, verifyDelivery } from "../../support/webhook-verify.ts";
import { webhookFor } from "../../webhooks/fixture.ts";

interface TestEnv {
  DB: D1Database;
  /** The Hrana stand-in the runner started, for libSQL over HTTP. */
  HRANA_URL: string;
  HRANA_TOKEN: string;
  /** Sends a request back in to this worker through workerd's HTTP server (see ./run.ts). */
  RELAY_URL: string;
  /** A webhook receiver (test/support/webhook-receiver.ts) outside workerd. */
  RECEIVER_URL: string;
}

const TARGET_HEADER = "x-formsink-test-target";
const targets = new Map<string, FetchHandler>();
let env: TestEnv;

const servedByThisWorker: StartHttpTarget = async (handler) => {
  const id = crypto.randomUUID();
  targets.set(id, handler);
  return {
    async send(request) {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.set(TARGET_HEADER, id);
      return fetch(new URL(url.pathname + url.search, env.RELAY_URL), {
        method: request.method,
        headers,
        body: request.body === null ? undefined : await request.arrayBuffer(),
        redirect: "manual",
      });
    },
    stop: async () => void targets.delete(id),
  };
};

/** The D1 database emptied (every table dropped) and migrated again: a fresh store. */
async function freshD1Store(options?: { identifyingFields?: readonly string[] }): Promise<CompleteStore> {
  // Newest first, so that a table goes before the tables its foreign keys point at (D1 enforces them).
  const { results } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY rowid DESC",
  ).all();
  const tables = (results as { name: string }[]).map(({ name }) => env.DB.prepare(`DROP TABLE "${name}"`));
  if (tables.length > 0) await env.DB.batch(tables);
  return createD1Store(env.DB, options);
}

httpSuite("workerd, memory store", servedByThisWorker);
// The client inside workerd, against a handler this worker serves (reached through the relay).
clientSuite("workerd, D1", async ({ basePath }) => {
  const store = await freshD1Store();
  const id = crypto.randomUUID();
  targets.set(id, createSubmissionsHandler(store, { basePath }));
  let accounts = 0;
  return {
    baseUrl: `${env.RELAY_URL}${basePath}`,
    fetch: (input, init) => {
      const request = new Request(input, init);
      request.headers.set(TARGET_HEADER, id);
      return fetch(request);
    },
    async newAccount() {
      const { key, record } = await createApiKey(store, { account: `client-${++accounts}` });
      return { key, insert: async (rows) => void (await store.importSubmissions(record.accountId, rows)) };
    },
    stop: async () => void targets.delete(id),
  };
});
httpSuite("workerd, D1", servedByThisWorker, { createStore: freshD1Store });
testCompleteStore("D1 in workerd", freshD1Store);

const adapter = suite("workers adapter");

async function listWith(worker: ReturnType<typeof createWorker>, workerEnv: WorkerEnv, key: string): Promise<Response> {
  return worker.fetch(new Request("http://formsink.test/api/submission", { headers: { "x-api-key": key } }), workerEnv);
}

adapter("takes its store from a D1 binding named DB, migrated on first use", async () => {
  const store = await freshD1Store();
  const { key } = await createApiKey(store, { account: "d1-account" });
  const response = await listWith(createWorker(), { DB: env.DB }, key);
  assert.is(response.status, 200);
  assert.equal(await response.json(), { items: [], limit: 10, offset: 0, total: 0, nextCursor: null });
});

adapter("its scheduled handler enforces the retention rules on D1", async () => {
  const store = await freshD1Store();
  const { record } = await createApiKey(store, { account: "retention-account" });
  const at = (daysAgo: number) => ({
    submissionId: crypto.randomUUID(), popupId: "popup_r", data: {}, domain: "", userAgent: "", device: "unknown" as const, status: "pending" as const,
    createdAt: new Date(Date.now() - daysAgo * 24 * 60 * 60_000).toISOString(),
  });
  const kept = at(5);
  await store.importSubmissions(record.accountId, [at(40), at(31), kept]);
  await store.setRetentionRules(record.accountId, [{ olderThanDays: 30 }]);
  await createWorker().scheduled({}, { DB: env.DB });
  assert.equal((await store.listSubmissions(record.accountId, { order: "asc", limit: 10, offset: 0 })).items, [kept]);
});

adapter("a create's webhook delivery goes out within the request's waitUntil, signed so that standardwebhooks verifies it", async () => {
  const store = createMemoryStore();
  const { key, record } = await createApiKey(store, { account: "webhooks-account" });
  const hook = webhookFor(`${env.RECEIVER_URL}/workerd-${crypto.randomUUID()}`);
  await store.insertWebhook(record.accountId, hook);
  const waiting: Promise<unknown>[] = [];
  const created = await createWorker({ store: async () => store }).fetch(
    new Request("http://formsink.test/api/submission", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ popupId: "popup_hook", data: { email: "hook@example.com" } }),
    }),
    { FORMSINK_ALLOW_PRIVATE_WEBHOOKS: "1" },
    { waitUntil: (promise) => void waiting.push(promise) },
  );
  assert.is(created.status, 201);
  assert.is(waiting.length, 1, "the delivery runs within waitUntil");
  await Promise.all(waiting);
  const received = ((await (await fetch(`${env.RECEIVER_URL}/received`)).json()) as ReceivedDelivery[]).filter((d) => hook.url.endsWith(d.path));
  assert.is(received.length, 1);
  const event = verifyDelivery(hook.secrets[0]!, received[0]!) as { type: string; data: { submissionId: string } };
  assert.equal([event.type, event.data.submissionId], ["submission.created", ((await created.json()) as { submissionId: string }).submissionId]);
});

adapter("without D1, takes a remote libSQL database from FORMSINK_DB and its token", async () => {
  const remote = { FORMSINK_DB: env.HRANA_URL, FORMSINK_DB_AUTH_TOKEN: env.HRANA_TOKEN };
  const store = await createLibsqlStore({ url: remote.FORMSINK_DB, authToken: remote.FORMSINK_DB_AUTH_TOKEN });
  const { key } = await createApiKey(store, { account: "remote-account" });
  const worker = createWorker();
  const created = await worker.fetch(
    new Request("http://formsink.test/api/submission", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ popupId: "popup_w", data: { email: "w@example.com" } }),
    }),
    remote,
  );
  assert.is(created.status, 201);
  const page = (await (await listWith(worker, remote, key)).json()) as { total: number };
  assert.is(page.total, 1);
});

adapter("with no store configured it answers 500 naming the missing D1 binding and how to add it, says so once in the log, and recovers once configured", async () => {
  const worker = createWorker();
  const errors: unknown[][] = [];
  const reported = console.error;
  console.error = (...parts: unknown[]) => void errors.push(parts);
  try {
    for (const path of ["/api/submission", "/api/health"]) {
      const response = await worker.fetch(new Request(`http://formsink.test${path}`), {});
      assert.is(response.status, 500);
      const { message } = (await response.json()) as { message: string };
      assert.match(message, "no D1 binding named DB and no FORMSINK_DB");
      assert.match(message, '[[d1_databases]] binding = "DB"');
      assert.not.match(message, "It has a D1 binding named");
    }
    assert.is(errors.length, 1, "said once, not per request");
    assert.match(String(errors[0]), "formsink: formsink is not configured");
  } finally {
    console.error = reported;
  }
  await freshD1Store();
  const later = await worker.fetch(new Request("http://formsink.test/api/submission"), { DB: env.DB });
  assert.is(later.status, 401);
});

adapter("a D1 binding under another name is named in the answer, with the two ways to use it", async () => {
  const reported = console.error;
  console.error = () => {};
  try {
    const response = await createWorker().fetch(new Request("http://formsink.test/api/submission"), { FORMS_DB: env.DB } as WorkerEnv);
    assert.is(response.status, 500);
    const { message } = (await response.json()) as { message: string };
    assert.match(message, "It has a D1 binding named FORMS_DB: name it DB, or pass createWorker({ store: (env) => createD1Store(env.FORMS_DB) })");
  } finally {
    console.error = reported;
  }
});

adapter("its scheduled handler prunes the store's change log to the retention it was given", async () => {
  const store = await freshD1Store();
  const cutoffs: number[] = [];
  const worker = createWorker<WorkerEnv>({
    eventRetentionDays: 7,
    store: async () => ({ ...store, pruneEvents: (before: number) => (cutoffs.push(before), store.pruneEvents(before)) }),
  });
  const earliest = Date.now();
  await worker.scheduled({}, {});
  const latest = Date.now();
  const WEEK = 7 * 24 * 60 * 60 * 1000;
  assert.is(cutoffs.length, 1);
  assert.ok(cutoffs[0]! >= earliest - WEEK && cutoffs[0]! <= latest - WEEK, "events older than seven days are pruned");
});

adapter.run();

export default {
  async fetch(request: Request, testEnv: TestEnv): Promise<Response> {
    const target = request.headers.get(TARGET_HEADER);
    if (target !== null) {
      const handler = targets.get(target);
      return handler ? handler(request) : new Response("no such test target", { status: 502 });
    }
    const url = new URL(request.url);
    if (url.pathname !== "/__run") return new Response("not found", { status: 404 });
    env = testEnv;
    const report = await runQueuedSuites();
    const failed = !/Total:\s+(\d+)[\s\S]*Passed:\s+\1\b/.test(report.replace(/\x1b\[[0-9;]*m/g, ""));
    return new Response(report, { status: failed ? 500 : 200 });
  },
};
