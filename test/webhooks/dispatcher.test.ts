/**
 * The dispatcher against real receivers (node:http servers) over the Node transport: signed
 * deliveries that `standardwebhooks` verifies (during a rotation too), retries with backoff on a
 * fake clock, a 410 and days of failures disabling an endpoint, a receiver down for hours, and
 * two dispatchers on one store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { Webhook } from "standardwebhooks";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import {
  ClaimAfterRecordingFailed, type CompleteStore, type DeliveryAttempt, type DeliveryClaim, eventTexts as textsOf, readEventsAsJson, recordDeliveryAttempts, type WebhookRecord,
  type WebhookStore,
} from "../../src/store.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { seedRows } from "../../src/testing/fixtures.ts";
import { type AttemptReport, createWebhookDispatcher, DEFAULT_ENDPOINT_CONCURRENCY, DEFAULT_LEASE_MS, type WebhookDispatcherOptions } from "../../src/webhooks/dispatcher.ts";
import type { WebhookRequest } from "../../src/webhooks/transport.ts";
import { type Receiver, startReceiver, verifies, verifyDelivery } from "../support/webhook-receiver.ts";
import { newSecret, webhookFor } from "./fixture.ts";

const ACCOUNT = "acct_dispatch";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Setup {
  store: CompleteStore;
  receiver: Receiver;
  hook: WebhookRecord;
  clock: { now: number };
  dispatcher: ReturnType<typeof createWebhookDispatcher>;
  /** The `webhook-id` of each request, in the order the dispatcher handed them to the transport. */
  started: string[];
  close(): Promise<void>;
}

/** A memory store with one endpoint at a live receiver, and a dispatcher on a clock the test moves (real time unless `fakeClock`). */
async function setup(options: { fakeClock?: boolean; dispatcher?: Partial<WebhookDispatcherOptions>; webCrypto?: boolean } = {}): Promise<Setup> {
  const store = createMemoryStore();
  const receiver = await startReceiver();
  const hook = webhookFor(`${receiver.url}/hooks`);
  await store.insertWebhook(ACCOUNT, hook);
  const clock = { now: Date.UTC(2030, 0, 1) };
  const transport = createWebhookTransport({ allowPrivate: true });
  const started: string[] = [];
  const starting = (request: WebhookRequest) => (started.push(request.headers["webhook-id"]!), transport(request));
  const dispatcher = createWebhookDispatcher(store, {
    // Without the transport's own HMAC, signatures are WebCrypto's, as on Workers.
    transport: options.webCrypto ? starting : Object.assign(starting, { hmacSha256: transport.hmacSha256 }),
    clock: options.fakeClock ? () => clock.now : Date.now,
    random: () => 0.5,
    ...options.dispatcher,
  });
  return {
    store, receiver, hook, clock, dispatcher, started,
    async close() {
      await dispatcher.stop();
      transport.close();
      await receiver.close();
      await store.close();
    },
  };
}

async function eventTexts(store: CompleteStore, accountId = ACCOUNT): Promise<string[]> {
  const page = await readEventsAsJson(store, accountId, { limit: 1000 });
  if (page.expired) throw new Error("expired");
  return textsOf(page);
}

const idOf = (text: string) => (JSON.parse(text) as { id: string }).id;

const test = suite("webhook dispatcher");

test("a delivery is the event as JSON, signed as Standard Webhooks says: standardwebhooks verifies it, and each event comes once, started in commit order", async () => {
  const s = await setup();
  try {
    const rows = seedRows(5);
    for (const row of rows) await s.store.insertSubmission(ACCOUNT, row);
    await s.store.setSubmissionStatus(ACCOUNT, rows[0]!.submissionId, rows[0]!.status === "pending" ? "completed" : "pending");
    await s.store.deleteSubmission(ACCOUNT, rows[1]!.submissionId);
    const events = await eventTexts(s.store);

    assert.is(await s.dispatcher.runOnce(), events.length);
    assert.equal(s.started, events.map(idOf), "started in commit order");
    // Several are under way at once, so they can be answered in another order.
    assert.equal(s.receiver.received.map((d) => d.body).sort(), [...events].sort(), "the bodies are the events as GET /api/events shows them");
    for (const delivery of s.receiver.received) {
      assert.equal(verifyDelivery(s.hook.secrets[0]!, delivery), JSON.parse(delivery.body));
      assert.is(delivery.id, idOf(delivery.body), "webhook-id is the event id");
      assert.is(delivery.headers["content-type"], "application/json");
      assert.ok(Math.abs(Number(delivery.timestamp) - Date.now() / 1000) < 60, "webhook-timestamp is Unix seconds");
      assert.ok(!verifies(newSecret(), delivery), "another secret does not verify");
    }
    assert.is(await s.dispatcher.runOnce(), 0, "nothing is sent twice");
    const { deliveries } = await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 100 });
    assert.ok(deliveries.length === events.length && deliveries.every((d) => d.status === "succeeded" && d.lastStatusCode === 204 && d.attempts === 1));
  } finally {
    await s.close();
  }
});

for (const signer of ["node:crypto", "WebCrypto"] as const) {
  test(`during a rotation both secrets sign (${signer}), so a receiver with either verifies; after it only the new one`, async () => {
    const s = await setup({ fakeClock: true, webCrypto: signer === "WebCrypto" });
    try {
      const [oldSecret, newer] = [s.hook.secrets[0]!, newSecret()];
      s.clock.now = Date.now();
      await s.store.updateWebhook(ACCOUNT, s.hook.webhookId, { secrets: [newer, oldSecret], previousSecretExpiresAt: s.clock.now + DAY });
      await s.store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
      await s.dispatcher.runOnce();
      const [during] = s.receiver.received;
      assert.is(during!.signature.split(" ").length, 2, "two signatures, space-separated");
      assert.ok(verifies(newer, during!) && verifies(oldSecret, during!), "each secret verifies");

      // standardwebhooks refuses a timestamp five minutes off its own clock: verify what is sent
      // after the expiry by its signatures alone, with the timestamp it carries.
      s.clock.now += DAY;
      await s.store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
      await s.dispatcher.runOnce();
      const after = s.receiver.received[1]!;
      assert.is(after.signature.split(" ").length, 1, "one signature once the old secret expired");
      assert.is(after.timestamp, String(Math.floor(s.clock.now / 1000)));
      assert.is(after.signature, resign(newer, after), "signed with the new secret");
    } finally {
      await s.close();
    }
  });
}

test("an attempt that starts long after its claim is signed again: its timestamp says when it was sent", async () => {
  const sending = createWebhookTransport({ allowPrivate: true });
  let clock = { now: 0 };
  // Each answer takes ten seconds of the fake clock, and the endpoint's attempts go one at a time.
  const slow = Object.assign(async (request: WebhookRequest) => {
    const answer = await sending(request);
    clock.now += 10_000;
    return answer;
  }, { hmacSha256: sending.hmacSha256 });
  const s = await setup({ fakeClock: true, dispatcher: { transport: slow, endpointConcurrency: 1 } });
  clock = s.clock;
  try {
    const claimedAt = s.clock.now;
    for (const row of seedRows(2)) await s.store.insertSubmission(ACCOUNT, row);
    assert.is(await s.dispatcher.runOnce(), 2);
    const [first, second] = s.receiver.received;
    assert.is(first!.timestamp, String(Math.floor(claimedAt / 1000)));
    assert.is(second!.timestamp, String(Math.floor((claimedAt + 10_000) / 1000)), "signed when sent, not when claimed");
    for (const delivery of [first!, second!]) assert.is(delivery.signature, resign(s.hook.secrets[0]!, delivery));
  } finally {
    await s.close();
    sending.close();
  }
});

test("a failing receiver is retried with growing waits, the first within 10 s, for about three days; then the delivery is failed", async () => {
  const s = await setup({ fakeClock: true });
  try {
    s.receiver.answer = 500;
    await s.store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const start = s.clock.now;
    const attempts: number[] = [];
    for (let rounds = 0; rounds < 100; rounds++) {
      const before = s.receiver.received.length;
      await s.dispatcher.runOnce();
      if (s.receiver.received.length > before) attempts.push(s.clock.now);
      const [delivery] = (await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 1 })).deliveries;
      if (delivery!.status !== "pending") break;
      s.clock.now = Date.parse(delivery!.nextAttemptAt!);
    }
    const [delivery] = (await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 1 })).deliveries;
    assert.is(delivery!.status, "failed");
    assert.is(delivery!.attempts, attempts.length);
    assert.is(delivery!.lastError, "the receiver answered 500");
    assert.ok(attempts[1]! - attempts[0]! <= 10_000, "the first retry within 10 s");
    const waits = attempts.slice(1).map((at, i) => at - attempts[i]!);
    assert.ok(waits.every((wait, i) => i === 0 || wait >= waits[i - 1]!), "each wait at least the one before");
    const span = attempts.at(-1)! - start;
    assert.ok(span > 2.5 * DAY && span <= 3 * DAY, `retried for about three days (${span / DAY} days)`);
  } finally {
    await s.close();
  }
});

test("a 410 answer disables the endpoint: the delivery is failed and nothing more is sent", async () => {
  const s = await setup();
  try {
    s.receiver.answer = 410;
    await s.store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    await s.dispatcher.runOnce();
    assert.ok((await s.store.getWebhook(ACCOUNT, s.hook.webhookId))!.disabledAt !== null, "disabled");
    const [delivery] = (await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 1 })).deliveries;
    assert.equal([delivery!.status, delivery!.lastStatusCode], ["failed", 410]);
    await s.store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    assert.is(await s.dispatcher.runOnce(), 0);
    assert.is(s.receiver.received.length, 1);
  } finally {
    await s.close();
  }
});

test("five days of nothing but failures disable an endpoint; a success in between starts the count again", async () => {
  const s = await setup({ fakeClock: true });
  try {
    s.receiver.answer = 503;
    const start = s.clock.now;
    const failDay = async (day: number) => {
      s.clock.now = start + day * DAY;
      await s.store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
      await s.dispatcher.runOnce();
      return (await s.store.getWebhook(ACCOUNT, s.hook.webhookId))!;
    };
    for (const day of [0, 1, 2, 3]) assert.is((await failDay(day)).disabledAt, null);
    s.receiver.answer = 204;
    await failDay(4);
    s.receiver.answer = 503;
    for (const day of [5, 6, 7, 8, 9]) assert.is((await failDay(day)).disabledAt, null, `day ${day}: failing for less than five days since the success`);
    assert.ok((await failDay(10)).disabledAt !== null, "disabled after five days of failures");
  } finally {
    await s.close();
  }
});

test("a receiver down for hours gets every event when it is back, in the order of their first attempts", async () => {
  const s = await setup({ fakeClock: true, dispatcher: { concurrency: 8 } });
  try {
    const port = s.receiver.port;
    await s.receiver.close();
    for (let hour = 0; hour < 6; hour++) {
      for (const row of seedRows(7)) await s.store.insertSubmission(ACCOUNT, row);
      for (let step = 0; step < 12; step++) {
        await s.dispatcher.runOnce();
        s.clock.now += 5 * 60_000;
      }
    }
    const failing = (await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 1000 })).deliveries;
    assert.is(failing.length, 42);
    assert.ok(failing.every((d) => d.status === "pending" && d.attempts > 1 && d.lastError === "could not reach the receiver: ECONNREFUSED"), "all retried, all pending");

    const back = await startReceiver(port);
    try {
      s.clock.now += 12 * HOUR;
      await s.dispatcher.runOnce();
      assert.equal(back.received.map((d) => d.id), (await eventTexts(s.store)).map(idOf), "every event, in commit order (the order of first attempts)");
    } finally {
      await back.close();
    }
  } finally {
    await s.close();
  }
});

test("two dispatchers on one store never send one delivery at once", async () => {
  const s = await setup();
  const other = createWebhookDispatcher(s.store, { transport: createWebhookTransport({ allowPrivate: true }), owner: "second" });
  try {
    await s.store.insertWebhook(ACCOUNT, webhookFor(`${s.receiver.url}/second`));
    s.receiver.delayMs = 5;
    for (const row of seedRows(30)) await s.store.insertSubmission(ACCOUNT, row);
    const [one, two] = await Promise.all([s.dispatcher.runOnce(), other.runOnce()]);
    assert.is(one + two, 60, "every delivery once between them");
    assert.is(s.receiver.received.length, 60);
    assert.equal([...s.receiver.overlapping], [], "no delivery was being answered twice at once");
    assert.is(new Set(s.receiver.received.map((d) => `${d.path} ${d.id}`)).size, 60, "each endpoint got each event once");
  } finally {
    await other.stop();
    await s.close();
  }
});

test("an endpoint's run of first attempts is claimed at once, sent in commit order, and its outcomes written together", async () => {
  const store = createMemoryStore();
  let claims = 0;
  const writes: number[] = [];
  const counted: WebhookStore = Object.assign(Object.create(null) as WebhookStore, store, {
    claimDeliveries: (claim: Parameters<WebhookStore["claimDeliveries"]>[0]) => (claims++, store.claimDeliveries(claim)),
    recordDeliveryAttempts: (attempts: Parameters<NonNullable<WebhookStore["recordDeliveryAttempts"]>>[0]) => {
      writes.push(attempts.length);
      return Promise.all(attempts.map((attempt) => store.recordDeliveryAttempt(attempt)));
    },
  });
  const sent: string[] = [];
  // A transport that answers at once, so that the whole run is sent before any timer fires.
  const transport = async (request: { headers: Record<string, string> }) => (sent.push(request.headers["webhook-id"]!), { status: 204 });
  try {
    await store.insertWebhook(ACCOUNT, webhookFor("https://receiver.example/hooks"));
    for (const row of seedRows(20)) await store.insertSubmission(ACCOUNT, row);
    assert.is(await createWebhookDispatcher(counted, { transport }).runOnce(), 20);
    assert.equal(sent, (await eventTexts(store)).map(idOf), "in commit order");
    assert.is(writes.reduce((sum, n) => sum + n, 0), 20, "every outcome written");
    // One write for the run, unless the run outlasts the longest wait of an outcome (a loaded machine).
    assert.ok(writes.length < 20, `outcomes written together, not one by one (${writes.join(", ")})`);
    assert.is(claims, 2, "one claim for the run, and one that finds nothing once it is recorded");
  } finally {
    await store.close();
  }
});

test("under a stream of changes, each write of outcomes is also the next claim: one write a cycle", async () => {
  const store = createMemoryStore();
  const calls: string[] = [];
  const counted: WebhookStore = Object.assign(Object.create(null) as WebhookStore, store, {
    claimDeliveries: (claim: DeliveryClaim) => (calls.push("claim"), store.claimDeliveries(claim)),
    recordDeliveryAttempts: (attempts: readonly DeliveryAttempt[]) => (calls.push(`record ${attempts.length}`), recordDeliveryAttempts(store, attempts)),
    recordAndClaimDeliveries: async (attempts: readonly DeliveryAttempt[], claim: DeliveryClaim) => {
      calls.push(`record ${attempts.length} and claim`);
      return { recorded: await recordDeliveryAttempts(store, attempts), claimed: await store.claimDeliveries(claim) };
    },
  });
  // Each of the first deliveries commits a change before it is answered: the next cycle's.
  let changes = 4;
  const transport = async () => {
    if (changes-- > 0) await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    return { status: 204 };
  };
  try {
    await store.insertWebhook(ACCOUNT, webhookFor("https://receiver.example/hooks"));
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    assert.is(await createWebhookDispatcher(counted, { transport }).runOnce(), 5);
    assert.equal(calls, ["claim", ...Array<string>(5).fill("record 1 and claim")], "after the first claim, a write a delivery: its outcome and the next claim");
    assert.equal((await store.listDeliveries(ACCOUNT, (await store.listWebhooks(ACCOUNT))[0]!.webhookId, { limit: 10 })).deliveries.map((d) => d.status),
      Array<string>(5).fill("succeeded"), "every outcome written");
  } finally {
    await store.close();
  }
});

test("when the claim after a write of outcomes fails, what follows the recorded outcomes still happens: the failure count, onAttempt", async () => {
  const store = createMemoryStore();
  const hook = webhookFor("https://receiver.example/hooks");
  const reports: AttemptReport[] = [];
  const errors: unknown[] = [];
  let claims = 0;
  // The second claim (the one that goes with the first outcome) fails after the outcome is recorded,
  // as a read after a combined commit can.
  const faulty: WebhookStore = Object.assign(Object.create(null) as WebhookStore, store, {
    claimDeliveries: async (claim: DeliveryClaim) => {
      if (++claims === 2) throw new Error("the connection dropped");
      return store.claimDeliveries(claim);
    },
  });
  const dispatcher = createWebhookDispatcher(faulty, {
    transport: async () => ({ status: 503 }),
    random: () => 0.5,
    onAttempt: (report) => reports.push(report),
    onError: (error) => errors.push(error),
  });
  try {
    await store.insertWebhook(ACCOUNT, hook);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    dispatcher.start();
    const since = performance.now();
    while (reports.length === 0 && performance.now() - since < 5_000) await new Promise((resolve) => setTimeout(resolve, 5));
    await dispatcher.stop();
    assert.ok(claims >= 2, "the claim after the outcome was made");
    assert.ok(errors.some((error) => error instanceof ClaimAfterRecordingFailed), "the failed claim is told");
    assert.equal(reports.map((r) => [r.status, r.statusCode, r.attempt]), [["pending", 503, 1]], "onAttempt told of the recorded attempt");
    const { deliveries } = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 });
    assert.equal(deliveries.map((d) => [d.status, d.attempts]), [["pending", 1]], "the outcome is recorded");
    assert.is((await store.getWebhook(ACCOUNT, hook.webhookId))!.failingSince, deliveries[0]!.lastAttemptAt && Date.parse(deliveries[0]!.lastAttemptAt),
      "the endpoint's failing days count from that attempt");
  } finally {
    await dispatcher.stop();
    await store.close();
  }
});

test("a slow receiver does not hold up another endpoint's new events for more than about a second", async () => {
  const store = createMemoryStore();
  const slow = webhookFor("https://slow.example/hooks");
  const quick = webhookFor("https://quick.example/hooks");
  const quickAt: number[] = [];
  let releaseSlow = () => {};
  const slowAnswer = new Promise<void>((resolve) => (releaseSlow = resolve));
  // The slow endpoint's receiver answers only when the test lets it: the run waits on it meanwhile.
  const transport = async (request: { url: string }) => {
    if (request.url.startsWith("https://slow.")) await slowAnswer;
    else quickAt.push(performance.now());
    return { status: 204 };
  };
  const dispatcher = createWebhookDispatcher(store, { transport });
  try {
    await store.insertWebhook(ACCOUNT, slow);
    await store.insertWebhook(ACCOUNT, quick);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const run = dispatcher.runOnce();
    while (quickAt.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Committed while the slow endpoint's first delivery is still being answered, after the quick one's was recorded.
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const committed = performance.now();
    while (quickAt.length < 2 && performance.now() - committed < 5_000) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.is(quickAt.length, 2, "the quick endpoint got the second event while the slow one was still answering");
    assert.ok(quickAt[1]! - committed < 2_000, `within about a second (${Math.round(quickAt[1]! - committed)} ms)`);
    releaseSlow();
    assert.is(await run, 4, "then the slow endpoint's two deliveries, in the same run");
  } finally {
    releaseSlow();
    await dispatcher.stop();
    await store.close();
  }
});

for (const endpointConcurrency of [undefined, 2]) {
  const width = endpointConcurrency ?? DEFAULT_ENDPOINT_CONCURRENCY;
  test(`an endpoint's first attempts are under way ${width} at once (endpointConcurrency ${endpointConcurrency ?? "by default"}), started in commit order`, async () => {
    const s = await setup({ dispatcher: { endpointConcurrency } });
    try {
      s.receiver.delayMs = 40;
      for (const row of seedRows(20)) await s.store.insertSubmission(ACCOUNT, row);
      const events = (await eventTexts(s.store)).map(idOf);
      assert.is(await s.dispatcher.runOnce(), 20);
      assert.equal(s.started, events, "started in commit order");
      assert.is(Math.max(...s.receiver.answeringAtOnce), width, `the receiver answered ${width} at once, never more`);
      assert.equal(s.receiver.received.map((d) => d.id).sort(), [...events].sort(), "each event once");
      const { deliveries } = await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 100 });
      assert.ok(deliveries.length === 20 && deliveries.every((d) => d.status === "succeeded" && d.attempts === 1), "every outcome recorded");
    } finally {
      await s.close();
    }
  });
}

test("an endpoint whose attempt failed goes one at a time: the rest of the run, its retries in order of first attempt; a success opens it up again", async () => {
  const s = await setup({ fakeClock: true });
  try {
    s.receiver.delayMs = 100;
    s.receiver.answer = 503;
    for (const row of seedRows(8)) await s.store.insertSubmission(ACCOUNT, row);
    const events = (await eventTexts(s.store)).map(idOf);
    assert.is(await s.dispatcher.runOnce(), 8);
    assert.equal(s.started, events, "started in commit order");
    const width = DEFAULT_ENDPOINT_CONCURRENCY;
    assert.is(Math.max(...s.receiver.answeringAtOnce.slice(0, width)), width, "the first attempts started before any failed were under way at once");
    assert.equal(s.receiver.answeringAtOnce.slice(width), Array<number>(8 - width).fill(1), "once one failed, the rest went one at a time");

    s.receiver.answer = 204;
    s.clock.now += HOUR;
    const before = s.receiver.received.length;
    assert.is(await s.dispatcher.runOnce(), 8, "every retry");
    assert.equal(s.receiver.received.slice(before).map((d) => d.id), events, "the retries arrive in the order of first attempts");
    assert.equal(s.receiver.answeringAtOnce.slice(before), Array<number>(8).fill(1), "one at a time");

    for (const row of seedRows(8)) await s.store.insertSubmission(ACCOUNT, row);
    const after = s.receiver.received.length;
    assert.is(await s.dispatcher.runOnce(), 8);
    assert.is(Math.max(...s.receiver.answeringAtOnce.slice(after)), width, "after a success, several at once again");
  } finally {
    await s.close();
  }
});

/** A libSQL file store beside its own client, so that a test can read the endpoint's place in the log. */
async function libsqlSetup() {
  const directory = mkdtempSync(join(tmpdir(), "formsink-window-"));
  const client = createClient({ url: `file:${join(directory, "formsink.db")}` });
  const store = await createLibsqlStore({ client });
  const receiver = await startReceiver();
  const hook = webhookFor(`${receiver.url}/hooks`);
  await store.insertWebhook(ACCOUNT, hook);
  const transport = createWebhookTransport({ allowPrivate: true });
  const place = async () => {
    const { rows } = await client.execute("SELECT log_position, lease_owner FROM webhooks");
    return { position: Number(rows[0]!.log_position), leased: rows[0]!.lease_owner !== null };
  };
  const positions = async () => (await client.execute("SELECT position FROM events ORDER BY position")).rows.map((row) => Number(row.position));
  return {
    store, receiver, hook, transport, place, positions,
    async close() {
      transport.close();
      await receiver.close();
      await store.close();
      client.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

test("libSQL: answers that end out of order are recorded in order; the endpoint's place in the log never passes an unrecorded one, and moves on once they are", async () => {
  const s = await libsqlSetup();
  const writes: number[][] = [];
  const counted: WebhookStore = Object.assign(Object.create(null) as WebhookStore, s.store, {
    recordAndClaimDeliveries: (attempts: readonly DeliveryAttempt[], claim: DeliveryClaim) => (writes.push(attempts.map((a) => a.position)), s.store.recordAndClaimDeliveries!(attempts, claim)),
    recordDeliveryAttempts: (attempts: readonly DeliveryAttempt[]) => (writes.push(attempts.map((a) => a.position)), s.store.recordDeliveryAttempts!(attempts)),
  });
  const dispatcher = createWebhookDispatcher(counted, { transport: s.transport });
  try {
    for (const row of seedRows(8)) await s.store.insertSubmission(ACCOUNT, row);
    const events = (await eventTexts(s.store)).map(idOf);
    const positions = await s.positions();
    const start = await s.place();
    // The first delivery is answered last: the three started beside it end well before it.
    s.receiver.delayOf = (delivery) => (delivery.id === events[0] ? 1_000 : 0);
    const run = dispatcher.runOnce();
    const since = performance.now();
    while (s.receiver.received.length < DEFAULT_ENDPOINT_CONCURRENCY && performance.now() - since < 5_000) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.is(s.receiver.received.length, DEFAULT_ENDPOINT_CONCURRENCY, "the next waits while one that many before it is under way");
    assert.equal(await s.place(), { ...start, leased: true }, "the place in the log has not moved past the unanswered first delivery");
    const listed = (await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 100 })).deliveries;
    assert.ok(listed.length === 8 && listed.every((d) => d.status === "pending"), "all still pending meanwhile: the answered ones wait for the first");

    assert.is(await run, 8);
    assert.equal(writes.flat(), positions, "outcomes written in commit order, whatever order their answers came in");
    assert.equal(await s.place(), { position: positions.at(-1)!, leased: false }, "the place moved past the run, and its lease is released");
    const { deliveries } = await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 100 });
    assert.equal(deliveries.map((d) => [d.status, d.attempts]), Array(8).fill(["succeeded", 1]), "every outcome recorded once");
    await s.store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    assert.is(await dispatcher.runOnce(), 1, "the next event goes out at once: nothing left holds the endpoint");
  } finally {
    await dispatcher.stop();
    await s.close();
  }
});

test("libSQL: a dispatcher that dies with answers held for an earlier one loses nothing: once its lease runs out another sends the run again", async () => {
  const s = await libsqlSetup();
  const clock = { now: Date.UTC(2030, 0, 1) };
  let hang = () => {};
  const hanging = new Promise<void>((resolve) => (hang = resolve));
  let first: string | undefined;
  // The first dispatcher's first request never ends: it dies then, holding the answers of the others.
  const dying = Object.assign(async (request: WebhookRequest) => {
    if (request.headers["webhook-id"] === first) await hanging;
    return s.transport(request);
  }, { hmacSha256: s.transport.hmacSha256 });
  const died = createWebhookDispatcher(s.store, { transport: dying, clock: () => clock.now, owner: "died" });
  const next = createWebhookDispatcher(s.store, { transport: s.transport, clock: () => clock.now, owner: "next" });
  try {
    for (const row of seedRows(8)) await s.store.insertSubmission(ACCOUNT, row);
    const events = (await eventTexts(s.store)).map(idOf);
    first = events[0];
    void died.runOnce();
    const since = performance.now();
    while (s.receiver.received.length < DEFAULT_ENDPOINT_CONCURRENCY - 1 && performance.now() - since < 5_000) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(s.receiver.received.map((d) => d.id), events.slice(1, DEFAULT_ENDPOINT_CONCURRENCY), "the ones after the first were answered");
    assert.is(await next.runOnce(), 0, "nothing to take while the lease lasts");

    clock.now += DEFAULT_LEASE_MS + 1;
    assert.is(await next.runOnce(), 8, "the whole run again, the first included");
    const { deliveries } = await s.store.listDeliveries(ACCOUNT, s.hook.webhookId, { limit: 100 });
    assert.equal(deliveries.map((d) => [d.status, d.attempts]), Array(8).fill(["succeeded", 1]), "every delivery recorded");
    assert.equal(await s.place(), { position: (await s.positions()).at(-1)!, leased: false });
    assert.equal(new Set(s.receiver.received.map((d) => d.id)), new Set(events), "every event reached the receiver");
  } finally {
    hang = () => {};
    await next.stop();
    await s.close();
  }
});

test.run();

/** The signature `secret` gives the delivery, computed here with standardwebhooks. */
function resign(secret: string, delivery: { id: string; timestamp: string; body: string }): string {
  return new Webhook(secret).sign(delivery.id, new Date(Number(delivery.timestamp) * 1000), delivery.body);
}
