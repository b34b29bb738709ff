/**
 * Webhook endpoints and their outbox (`WebhookStore` in src/store.ts) as tests, for a store that
 * is also a `SubmissionStore` and an `EventLog`: which events become whose deliveries, leases,
 * the order of first attempts and of retries, the delivery log, retry, replay and deletion.
 * Claims take `now` from the test, so nothing here waits for a lease or a retry to come due.
 */
import type { EventType } from "../events.ts";
import {
  type ClaimedDelivery, type DeliveryStatus, type EventLog, eventTexts, readEventsAsJson, recordAndClaimDeliveries, recordDeliveryAttempts,
  type SubmissionStore,
  type WebhookRecord, type WebhookStore,
} from "../store.ts";
import type { Submission } from "../submission.ts";
import { assert } from "./assert.ts";
import { ACCOUNT, OTHER_ACCOUNT, seedRows } from "./fixtures.ts";
import { storeTests, type StoreSuiteOptions } from "./suite.ts";

type Store = SubmissionStore & EventLog & WebhookStore;

const LEASE_MS = 30_000;
/** Claims happen at `NOW` and later; events carry the real time they were written. */
const NOW = Date.UTC(2030, 0, 1);

function endpoint(overrides: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    webhookId: `wh_${crypto.randomUUID()}`,
    url: "https://receiver.example/hooks",
    types: null,
    popupId: null,
    description: null,
    createdAt: new Date().toISOString(),
    disabledAt: null,
    secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    previousSecretExpiresAt: null,
    failingSince: null,
    ...overrides,
  };
}

function claim(store: Store, now: number, owner = "dispatcher-a", limit = 100): Promise<ClaimedDelivery[]> {
  return store.claimDeliveries({ now, limit, leaseMs: LEASE_MS, owner });
}

/** Records the claimed delivery's attempt at `at`: success, or a failure retried at `retryAt` (failed for good without one). */
function record(store: Store, delivery: ClaimedDelivery, at: number, outcome: { owner?: string; fail?: boolean; retryAt?: number } = {}) {
  const status: DeliveryStatus = !outcome.fail ? "succeeded" : outcome.retryAt === undefined ? "failed" : "pending";
  return store.recordDeliveryAttempt({
    accountId: delivery.accountId,
    webhookId: delivery.webhook.webhookId,
    position: delivery.position,
    owner: outcome.owner ?? "dispatcher-a",
    at,
    durationMs: 12,
    statusCode: outcome.fail ? 503 : 204,
    error: outcome.fail ? "the receiver answered 503" : null,
    status,
    nextAttemptAt: status === "pending" ? outcome.retryAt! : null,
  });
}

/** Claims and succeeds until nothing is due at `now`; the event ids each endpoint got, in the order claimed. */
async function drain(store: Store, now: number): Promise<Map<string, string[]>> {
  const sent = new Map<string, string[]>();
  for (let rounds = 0; rounds < 1000; rounds++) {
    const claimed = await claim(store, now);
    if (claimed.length === 0) return sent;
    for (const delivery of claimed) {
      const key = delivery.webhook.webhookId;
      sent.set(key, [...(sent.get(key) ?? []), delivery.eventId]);
      assert.is(await record(store, delivery, now), true, "recording an attempt under a live lease");
    }
  }
  throw new Error("claims never ran dry");
}

/** The account's events as `readEventsAsJson` gives them now: text, id, type and position. */
async function eventsOf(store: Store, accountId: string) {
  const page = await readEventsAsJson(store, accountId, { limit: 1000 });
  if (page.expired) throw new Error("the log says a cursor expired where none was given");
  return eventTexts(page).map((text) => {
    const event = JSON.parse(text) as { id: string; type: EventType; data: { popupId: string } };
    return { text, id: event.id, type: event.type, popupId: event.data.popupId };
  });
}

/** The event at `position` as `readEventsAsJson` gives it now. */
async function eventAt(store: Store, accountId: string, position: number): Promise<string | undefined> {
  const page = await readEventsAsJson(store, accountId, { after: position - 1, limit: 1 });
  return page.expired ? undefined : eventTexts(page)[0];
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Registers the tests of `WebhookStore` with your runner's `test`. */
export function testWebhookStore<S extends Store>(options: StoreSuiteOptions<S>): void {
  const test = storeTests(options);

  test("webhooks: endpoints are stored as given, listed oldest first, changed, deleted, and a taken id fails", async (store) => {
    const first = endpoint({ description: "CRM", types: ["submission.created"], popupId: "popup_a" });
    const second = endpoint({ secrets: ["whsec_bmV3ZXI=", "whsec_b2xkZXI="], previousSecretExpiresAt: NOW + 1000 });
    await store.insertWebhook(ACCOUNT, first);
    await store.insertWebhook(ACCOUNT, second);
    let failed = false;
    await store.insertWebhook(ACCOUNT, { ...first, url: "https://other.example/" }).catch(() => (failed = true));
    assert.ok(failed, "a second endpoint with one id fails");
    assert.equal(await store.getWebhook(ACCOUNT, first.webhookId), first);
    assert.equal((await store.listWebhooks(ACCOUNT)).map((w) => w.webhookId), [first.webhookId, second.webhookId]);

    const changed = await store.updateWebhook(ACCOUNT, first.webhookId, { url: "https://new.example/in", types: null, disabledAt: new Date(NOW).toISOString(), failingSince: NOW });
    assert.equal(changed, { ...first, url: "https://new.example/in", types: null, disabledAt: new Date(NOW).toISOString(), failingSince: NOW });
    assert.equal(await store.getWebhook(ACCOUNT, first.webhookId), changed);
    assert.equal(await store.updateWebhook(ACCOUNT, first.webhookId, { secrets: ["whsec_c2Vjb25k"], previousSecretExpiresAt: null }), {
      ...changed!, secrets: ["whsec_c2Vjb25k"], previousSecretExpiresAt: null,
    });
    assert.is(await store.updateWebhook(ACCOUNT, "wh_missing", { description: "x" }), undefined);

    assert.is(await store.deleteWebhook(ACCOUNT, first.webhookId), true);
    assert.is(await store.deleteWebhook(ACCOUNT, first.webhookId), false);
    assert.is(await store.getWebhook(ACCOUNT, first.webhookId), undefined);
    assert.equal(await store.listWebhooks(ACCOUNT), [second]);
  });

  test("webhooks: whether any account has an enabled endpoint (a store that answers it)", async (store) => {
    if (!store.hasEnabledWebhooks) return;
    assert.is(await store.hasEnabledWebhooks(), false, "no endpoint yet");
    const theirs = endpoint();
    await store.insertWebhook(OTHER_ACCOUNT, theirs);
    assert.is(await store.hasEnabledWebhooks(), true, "another account's endpoint counts");
    await store.updateWebhook(OTHER_ACCOUNT, theirs.webhookId, { disabledAt: new Date(NOW).toISOString() });
    assert.is(await store.hasEnabledWebhooks(), false, "a disabled endpoint has nothing to send");
    await store.updateWebhook(OTHER_ACCOUNT, theirs.webhookId, { disabledAt: null });
    assert.is(await store.hasEnabledWebhooks(), true, "enabled again");
    await store.deleteWebhook(OTHER_ACCOUNT, theirs.webhookId);
    assert.is(await store.hasEnabledWebhooks(), false, "deleted");
  });

  test("webhooks: an endpoint is sent only the events committed after it was added; first attempts in commit order", async (store) => {
    const [before, a, b, c] = seedRows(4) as [Submission, Submission, Submission, Submission];
    await store.insertSubmission(ACCOUNT, before);
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    assert.equal(await claim(store, NOW), [], "nothing committed since the endpoint was added");
    await store.insertSubmission(ACCOUNT, a);
    await store.importSubmissions(ACCOUNT, [b, c]);
    await store.setSubmissionStatus(ACCOUNT, a.submissionId, a.status === "pending" ? "completed" : "pending");
    const expected = (await eventsOf(store, ACCOUNT)).slice(1);

    const got: ClaimedDelivery[] = [];
    for (let round = 0; got.length < expected.length && round < expected.length; round++) {
      const run = await claim(store, NOW + round, "dispatcher-a", 2);
      assert.is(run.length, Math.min(2, expected.length - got.length), "a claim gives as many of the next first attempts as the limit allows");
      assert.equal(run.map((d) => d.eventId), expected.slice(got.length, got.length + run.length).map((e) => e.id), "in commit order");
      assert.equal(await claim(store, NOW + round, "dispatcher-b"), [], "later events wait while an earlier one is leased and not attempted");
      for (const delivery of run) assert.is(await record(store, delivery, NOW + round), true);
      got.push(...run);
    }
    assert.equal(await claim(store, NOW + 100), [], "each event once");

    for (const [i, delivery] of got.entries()) {
      assert.is(delivery.accountId, ACCOUNT);
      assert.equal(delivery.webhook, hook);
      assert.is(delivery.eventType, expected[i]!.type);
      assert.is(delivery.event, expected[i]!.text, "the body is the event as the log reads");
      assert.is(delivery.event, await eventAt(store, ACCOUNT, delivery.position), "the position is the event's place in the log");
      assert.is(delivery.attempts, 0);
      assert.is(delivery.firstAttemptAt, null);
    }
  });

  test("webhooks: recording several attempts at once answers each as recorded alone", async (store) => {
    const hooks = [endpoint(), endpoint(), endpoint()];
    for (const hook of hooks) await store.insertWebhook(ACCOUNT, hook);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const claimed = await claim(store, NOW, "dispatcher-a");
    const of = (hook: WebhookRecord) => claimed.find((d) => d.webhook.webhookId === hook.webhookId)!;
    const attempt = (hook: WebhookRecord, owner: string, status: DeliveryStatus) => ({
      accountId: ACCOUNT, webhookId: hook.webhookId, position: of(hook).position, owner, at: NOW + 1, durationMs: 3,
      statusCode: status === "succeeded" ? 200 : 500, error: status === "succeeded" ? null : "the receiver answered 500", status,
      nextAttemptAt: status === "pending" ? NOW + 5000 : null,
    });
    const [succeeded, lost, retried] = hooks as [WebhookRecord, WebhookRecord, WebhookRecord];
    const results = await recordDeliveryAttempts(store, [
      attempt(succeeded, "dispatcher-a", "succeeded"), attempt(lost, "someone-else", "succeeded"), attempt(retried, "dispatcher-a", "pending"),
    ]);
    assert.equal(results, [true, false, true]);
    const logged = async (hook: WebhookRecord) =>
      (await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 })).deliveries.map((d) => [d.status, d.attempts, d.nextAttemptAt]);
    assert.equal(await logged(succeeded), [["succeeded", 1, null]]);
    assert.equal(await logged(lost), [["pending", 0, new Date(NOW).toISOString()]], "a lost lease's attempt is not recorded");
    assert.equal(await logged(retried), [["pending", 1, new Date(NOW + 5000).toISOString()]]);
    assert.equal(await recordDeliveryAttempts(store, []), []);
  });

  test("webhooks: outcomes written beside creates, one of them lost to another owner: the creates are stored and each attempt is answered as alone", async (store) => {
    const [hook, other] = [endpoint(), endpoint()];
    for (const h of [hook, other]) await store.insertWebhook(ACCOUNT, h);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const claimed = await claim(store, NOW, "dispatcher-a");
    const attempt = (delivery: ClaimedDelivery, owner: string) => ({
      accountId: ACCOUNT, webhookId: delivery.webhook.webhookId, position: delivery.position, owner, at: NOW + 1, durationMs: 3,
      statusCode: 204, error: null, status: "succeeded" as const, nextAttemptAt: null,
    });
    const [mine, lost] = [claimed.find((d) => d.webhook.webhookId === hook.webhookId)!, claimed.find((d) => d.webhook.webhookId === other.webhookId)!];
    const created = seedRows(3).slice(1);
    // Started in one turn, so that a store committing writes together may put them in one transaction.
    const [recorded] = await Promise.all([
      recordDeliveryAttempts(store, [attempt(lost, "someone-else"), attempt(mine, "dispatcher-a")]),
      ...created.map((submission) => store.insertSubmission(ACCOUNT, submission)),
    ]);
    assert.equal(recorded, [false, true]);
    for (const submission of created) assert.ok(await store.getSubmission(ACCOUNT, submission.submissionId), "the create beside the outcomes is stored");
    const logged = async (h: WebhookRecord) =>
      (await store.listDeliveries(ACCOUNT, h.webhookId, { limit: 10 })).deliveries.map((d) => [d.position, d.status, d.attempts]);
    assert.equal((await logged(hook)).at(-1), [mine.position, "succeeded", 1]);
    assert.equal((await logged(other)).at(-1), [lost.position, "pending", 0], "the lost lease's attempt is not recorded");
  });

  test("webhooks: recording and claiming in one call: the claim sees the outcomes, and each attempt is answered as recorded alone", async (store) => {
    const [hook, other] = [endpoint(), endpoint()];
    await store.insertWebhook(ACCOUNT, hook);
    await store.insertWebhook(ACCOUNT, other);
    for (const row of seedRows(3)) await store.insertSubmission(ACCOUNT, row);
    const events = await eventsOf(store, ACCOUNT);
    const first = await claim(store, NOW, "dispatcher-a", 4);
    const find = (webhook: WebhookRecord, i: number) => first.find((d) => d.webhook.webhookId === webhook.webhookId && d.eventId === events[i]!.id)!;
    const [a, b, otherA, otherB] = [find(hook, 0), find(hook, 1), find(other, 0), find(other, 1)];
    assert.ok(a && b && otherA && otherB, "the first two events to both endpoints");
    const attempt = (delivery: ClaimedDelivery, owner: string, status: DeliveryStatus) => ({
      accountId: ACCOUNT, webhookId: delivery.webhook.webhookId, position: delivery.position, owner, at: NOW + 1, durationMs: 3,
      statusCode: status === "succeeded" ? 200 : 500, error: status === "succeeded" ? null : "the receiver answered 500", status,
      nextAttemptAt: status === "pending" ? NOW + 5000 : null,
    });
    // The endpoint's run is all recorded, the other's not (one outcome lost to another owner, one never made).
    const { recorded, claimed } = await recordAndClaimDeliveries(
      store,
      [attempt(a, "dispatcher-a", "succeeded"), attempt(b, "dispatcher-a", "pending"), attempt(otherA, "someone-else", "succeeded")],
      { now: NOW + 2, limit: 10, leaseMs: LEASE_MS, owner: "dispatcher-a" },
    );
    assert.equal(recorded, [true, true, false]);
    assert.equal(
      claimed.map((d) => [d.webhook.webhookId, d.eventId]),
      [[hook.webhookId, events[2]!.id]],
      "the endpoint's next first attempt, claimable once its run is recorded; the other endpoint's wait behind its leased ones",
    );
    const logged = async (webhook: WebhookRecord) =>
      (await store.listDeliveries(ACCOUNT, webhook.webhookId, { limit: 10 })).deliveries.map((d) => [d.eventId, d.status, d.attempts]);
    assert.equal(await logged(hook), [[events[2]!.id, "pending", 0], [events[1]!.id, "pending", 1], [events[0]!.id, "succeeded", 1]]);
    const earlier = new Set([events[0]!.id, events[1]!.id]);
    assert.equal((await logged(other)).filter(([id]) => earlier.has(id as string)), [[events[1]!.id, "pending", 0], [events[0]!.id, "pending", 0]]);
    assert.equal(await claim(store, NOW + 3, "dispatcher-b"), [], "what the call leased is not claimed again");
    assert.equal(
      (await recordAndClaimDeliveries(store, [], { now: NOW + 3, limit: 10, leaseMs: LEASE_MS, owner: "dispatcher-b" })).claimed,
      [],
      "with no attempts, it is a claim",
    );
  });

  test("webhooks: recording and claiming in one call goes on through a replay's run, and records the last outcomes when nothing is left", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    for (const row of seedRows(3)) await store.insertSubmission(ACCOUNT, row);
    const ids = (await eventsOf(store, ACCOUNT)).map((event) => event.id);
    const succeeded = (delivery: ClaimedDelivery, at: number) => ({
      accountId: ACCOUNT, webhookId: delivery.webhook.webhookId, position: delivery.position, owner: "dispatcher-a", at, durationMs: 3,
      statusCode: 204, error: null, status: "succeeded" as const, nextAttemptAt: null,
    });
    const next = (attempts: ReturnType<typeof succeeded>[], now: number) =>
      recordAndClaimDeliveries(store, attempts, { now, limit: 2, leaseMs: LEASE_MS, owner: "dispatcher-a" });
    let { claimed } = await next([], NOW);
    assert.equal(claimed.map((d) => d.eventId), ids.slice(0, 2));
    ({ claimed } = await next(claimed.map((d) => succeeded(d, NOW)), NOW + 1));
    assert.equal(claimed.map((d) => d.eventId), ids.slice(2));
    let recorded: boolean[];
    ({ recorded, claimed } = await next(claimed.map((d) => succeeded(d, NOW + 1)), NOW + 2));
    assert.equal([recorded, claimed], [[true], []], "the last outcome recorded, nothing more to claim");

    // Added after the events: a replay gives it deliveries never attempted, a run of them.
    const late = endpoint();
    await store.insertWebhook(ACCOUNT, late);
    assert.is(await store.replayDeliveries(ACCOUNT, late.webhookId, 0, NOW + 3), 3);
    ({ claimed } = await next([], NOW + 3));
    assert.equal(claimed.map((d) => [d.webhook.webhookId, d.eventId]), ids.slice(0, 2).map((id) => [late.webhookId, id]), "a replay's run, as many as the limit");
    ({ recorded, claimed } = await next(claimed.map((d) => succeeded(d, NOW + 3)), NOW + 4));
    assert.equal([recorded, claimed.map((d) => d.eventId)], [[true, true], ids.slice(2)], "the rest of the run, once its first part is recorded");
    ({ recorded, claimed } = await next(claimed.map((d) => succeeded(d, NOW + 4)), NOW + 5));
    assert.equal([recorded, claimed], [[true], []]);
    for (const webhook of [hook, late]) {
      const log = (await store.listDeliveries(ACCOUNT, webhook.webhookId, { limit: 10 })).deliveries;
      assert.equal(log.map((d) => [d.eventId, d.status, d.attempts]), ids.toReversed().map((id) => [id, "succeeded", 1]));
    }
  });

  test("webhooks: an attempt never made (a lost lease) is made before any later event's first attempt", async (store) => {
    await store.insertWebhook(ACCOUNT, endpoint());
    const [a, b] = seedRows(2) as [Submission, Submission];
    await store.insertSubmission(ACCOUNT, a);
    await store.insertSubmission(ACCOUNT, b);
    const first = await claim(store, NOW);
    assert.ok(first.length >= 1, "the first event is due");
    // The dispatcher holding it died: nothing is recorded, the lease runs out.
    const again = await claim(store, NOW + LEASE_MS + 1, "dispatcher-b");
    assert.equal(again.slice(0, first.length).map((d) => [d.eventId, d.attempts]), first.map((d) => [d.eventId, 0]), "the same events again, in order, still first attempts");
  });

  test("webhooks: a first attempt whose outcome was never recorded is claimed again once its lease runs out, though later ones were", async (store) => {
    await store.insertWebhook(ACCOUNT, endpoint());
    for (const row of seedRows(3)) await store.insertSubmission(ACCOUNT, row);
    const [lost, ...rest] = await claim(store, NOW);
    assert.is(rest.length, 2, "all three are due");
    // The write of the first outcome failed; the next ones were recorded.
    for (const delivery of rest) assert.is(await record(store, delivery, NOW + 1), true);
    assert.ok(!(await claim(store, NOW + 2, "dispatcher-b")).some((d) => d.eventId === lost!.eventId), "still leased");
    const again = await claim(store, NOW + LEASE_MS + 1, "dispatcher-b");
    const retaken = again.find((d) => d.eventId === lost!.eventId);
    assert.is(retaken?.attempts, 0, "the lost outcome's delivery is claimed again, as a first attempt");
    assert.is(await record(store, retaken!, NOW + LEASE_MS + 2, { owner: "dispatcher-b" }), true);
  });

  test("webhooks: a lease keeps a delivery from a second owner until it runs out; the lost lease's outcome is not recorded", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const held = (await claim(store, NOW, "dispatcher-a"))[0]!;
    assert.ok(held, "the event is due");
    assert.equal(await claim(store, NOW + LEASE_MS - 1, "dispatcher-b"), [], "leased to another");
    const [taken] = await claim(store, NOW + LEASE_MS + 1, "dispatcher-b");
    assert.is(taken?.eventId, held.eventId, "the lease ran out");
    assert.is(await record(store, held, NOW + 5, { owner: "dispatcher-a" }), false, "dispatcher-a lost its lease");
    assert.is(await record(store, taken!, NOW + LEASE_MS + 2, { owner: "dispatcher-b", fail: true, retryAt: NOW + LEASE_MS + 1000 }), true);
    assert.is(await record(store, taken!, NOW + LEASE_MS + 3, { owner: "dispatcher-b" }), false, "a recorded attempt released the lease");
    const { deliveries } = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 });
    assert.equal(deliveries.map((d) => [d.status, d.attempts, d.lastStatusCode, d.lastAttemptAt]), [
      ["pending", 1, 503, new Date(NOW + LEASE_MS + 2).toISOString()],
    ]);
  });

  test("webhooks: due retries come in order of first attempt, not of when they came due", async (store) => {
    // Added first, attempted last: its place in any list is not what decides.
    const late = endpoint();
    const early = endpoint();
    await store.insertWebhook(ACCOUNT, late);
    await store.insertWebhook(ACCOUNT, early);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const claimed = await claim(store, NOW);
    assert.equal(claimed.map((d) => d.webhook.webhookId).sort(byId), [early.webhookId, late.webhookId].sort(byId), "each endpoint has its delivery");
    const of = (hook: WebhookRecord) => claimed.find((d) => d.webhook.webhookId === hook.webhookId)!;
    assert.is(await record(store, of(early), NOW + 1, { fail: true, retryAt: NOW + 500 }), true);
    assert.is(await record(store, of(late), NOW + 2, { fail: true, retryAt: NOW + 100 }), true);
    assert.equal(await claim(store, NOW + 99), [], "no retry is due yet");

    const [first] = await claim(store, NOW + 1000, "dispatcher-a", 1);
    assert.equal([first?.webhook.webhookId, first?.attempts, first?.firstAttemptAt], [early.webhookId, 1, NOW + 1]);
    const [second] = await claim(store, NOW + 1000, "dispatcher-a", 1);
    assert.equal([second?.webhook.webhookId, second?.attempts, second?.firstAttemptAt], [late.webhookId, 1, NOW + 2]);
  });

  test("webhooks: a failing earlier delivery does not hold back later first attempts, and its retries keep its place", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    for (const row of seedRows(3)) await store.insertSubmission(ACCOUNT, row);
    const ids = (await eventsOf(store, ACCOUNT)).map((e) => e.id);
    const firstAttempts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const [delivery] = await claim(store, NOW + i, "dispatcher-a", 1);
      firstAttempts.push(delivery!.eventId);
      await record(store, delivery!, NOW + i, { fail: true, retryAt: NOW + 10_000 - i });
    }
    assert.equal(firstAttempts, ids, "every first attempt, though each failed");
    const retries = await claim(store, NOW + 20_000);
    assert.equal(retries.map((d) => [d.eventId, d.attempts]), ids.map((id) => [id, 1]), "the retries in order of first attempt");
  });

  test("webhooks: types and popup filters choose the events; a changed filter applies to what comes next", async (store) => {
    const deletes = endpoint({ types: ["submission.deleted"] });
    const ofPopup = endpoint({ popupId: "popup_a", types: ["submission.created", "submission.deleted"] });
    const everything = endpoint();
    for (const hook of [deletes, ofPopup, everything]) await store.insertWebhook(ACCOUNT, hook);
    const rows = seedRows(9);
    for (const row of rows) await store.insertSubmission(ACCOUNT, row);
    for (const row of rows.slice(0, 5)) await store.setSubmissionStatus(ACCOUNT, row.submissionId, row.status === "pending" ? "completed" : "pending");
    for (const row of rows.slice(3, 7)) await store.deleteSubmission(ACCOUNT, row.submissionId);
    const events = await eventsOf(store, ACCOUNT);
    const sent = await drain(store, NOW);
    assert.equal(sent.get(everything.webhookId), events.map((e) => e.id));
    assert.equal(sent.get(deletes.webhookId), events.filter((e) => e.type === "submission.deleted").map((e) => e.id));
    assert.equal(sent.get(ofPopup.webhookId), events.filter((e) => e.popupId === "popup_a" && e.type !== "submission.status_changed").map((e) => e.id));

    await store.updateWebhook(ACCOUNT, deletes.webhookId, { types: ["submission.created"] });
    const [extra] = seedRows(1) as [Submission];
    await store.insertSubmission(ACCOUNT, { ...extra, popupId: "popup_b" });
    const next = await drain(store, NOW + 1);
    assert.equal([...next.keys()].sort(byId), [deletes.webhookId, everything.webhookId].sort(byId));
    assert.equal(next.get(deletes.webhookId), [(await eventsOf(store, ACCOUNT)).at(-1)!.id]);
  });

  test("webhooks: a disabled endpoint is sent nothing; enabled again, its waiting retries go on and what came meanwhile is skipped", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    const [a, b, c] = seedRows(3) as [Submission, Submission, Submission];
    await store.insertSubmission(ACCOUNT, a);
    const [failing] = await claim(store, NOW);
    await record(store, failing!, NOW, { fail: true, retryAt: NOW + 10 });
    await store.updateWebhook(ACCOUNT, hook.webhookId, { disabledAt: new Date(NOW).toISOString() });
    await store.insertSubmission(ACCOUNT, b);
    assert.equal(await claim(store, NOW + 1000), [], "a due retry waits, a new event is not taken");
    await store.updateWebhook(ACCOUNT, hook.webhookId, { disabledAt: null });
    await store.insertSubmission(ACCOUNT, c);
    const [, skipped, latest] = await eventsOf(store, ACCOUNT);
    const sent = await drain(store, NOW + 2000);
    assert.equal([...(sent.get(hook.webhookId) ?? [])].sort(byId), [failing!.eventId, latest!.id].sort(byId));
    const logged = (await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 })).deliveries.map((d) => d.eventId);
    assert.ok(!logged.includes(skipped!.id), "the event committed while disabled is no delivery of it");
  });

  test("webhooks: the delivery log shows each outcome, newest event first, by page and by status", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    for (const row of seedRows(5)) await store.insertSubmission(ACCOUNT, row);
    const events = await eventsOf(store, ACCOUNT);
    const outcomes: { fail?: boolean; retryAt?: number }[] = [{}, { fail: true }, { fail: true, retryAt: NOW + 60_000 }, {}, { fail: true }];
    for (const [i, outcome] of outcomes.entries()) {
      const [delivery] = await claim(store, NOW + i, "dispatcher-a", 1);
      assert.is(await record(store, delivery!, NOW + i, outcome), true);
    }

    const pages: string[][] = [];
    let after: number | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 2, after });
      assert.ok(page.deliveries.length <= 2, "at most the limit");
      pages.push(page.deliveries.map((d) => d.eventId));
      if (page.cursor === null) break;
      after = page.cursor;
    }
    assert.equal(pages.flat(), events.map((e) => e.id).reverse(), "every delivery once, newest event first");

    const { deliveries } = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 });
    const [fifth, , third, second, first] = deliveries;
    const at = (i: number) => new Date(NOW + i).toISOString();
    assert.equal(first, {
      eventId: events[0]!.id, eventType: "submission.created", position: first!.position, status: "succeeded", attempts: 1,
      lastAttemptAt: at(0), nextAttemptAt: null, lastStatusCode: 204, lastError: null, lastDurationMs: 12,
    });
    assert.equal(second, {
      eventId: events[1]!.id, eventType: "submission.created", position: second!.position, status: "failed", attempts: 1,
      lastAttemptAt: at(1), nextAttemptAt: null, lastStatusCode: 503, lastError: "the receiver answered 503", lastDurationMs: 12,
    });
    assert.equal([third!.status, third!.nextAttemptAt], ["pending", new Date(NOW + 60_000).toISOString()]);
    assert.is(fifth!.status, "failed");

    const failed = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 1, status: "failed" });
    assert.equal(failed.deliveries.map((d) => d.eventId), [events[4]!.id]);
    const rest = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 1, status: "failed", after: failed.cursor! });
    assert.equal(rest.deliveries.map((d) => d.eventId), [events[1]!.id]);
    assert.equal((await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10, status: "pending" })).deliveries.map((d) => d.eventId), [events[2]!.id]);
    assert.equal(await store.listDeliveries(ACCOUNT, "wh_missing", { limit: 10 }), { deliveries: [], cursor: null });
  });

  test("webhooks: an account's delivery log and its cursors are the same whether or not another account writes in between", async (store) => {
    // The same creates in two accounts, one alone and one with the other account (with an
    // endpoint of its own) writing between each of them.
    const alone = "acct-conformance-alone";
    const rows = seedRows(4);
    const others = seedRows(4 * 3);
    const hooks = new Map([[ACCOUNT, endpoint()], [alone, endpoint()], [OTHER_ACCOUNT, endpoint()]]);
    for (const [accountId, hook] of hooks) await store.insertWebhook(accountId, hook);
    for (const row of rows) await store.insertSubmission(alone, row);
    for (const [i, row] of rows.entries()) {
      for (const other of others.slice(i * 3, i * 3 + 3)) await store.insertSubmission(OTHER_ACCOUNT, other);
      await store.insertSubmission(ACCOUNT, row);
    }
    await drain(store, NOW);
    const log = async (accountId: string) => {
      const pages: unknown[] = [];
      let after: number | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await store.listDeliveries(accountId, hooks.get(accountId)!.webhookId, { limit: 1, after });
        pages.push({ cursor: page.cursor, deliveries: page.deliveries.map(({ eventId: _, ...delivery }) => delivery) });
        if (page.cursor === null) break;
        after = page.cursor;
      }
      return pages;
    };
    const quiet = await log(alone);
    assert.is(quiet.length, 4);
    assert.equal(await log(ACCOUNT), quiet);
  });

  test("webhooks: retry sends one delivery again now, attempts counting on; replay sends every event kept since an instant", async (store) => {
    const [early, a, b] = seedRows(3) as [Submission, Submission, Submission];
    const since = Date.now();
    await store.insertSubmission(ACCOUNT, early);
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    await store.insertSubmission(ACCOUNT, a);
    await store.insertSubmission(ACCOUNT, b);
    const [oldEvent, eventA, eventB] = await eventsOf(store, ACCOUNT);
    const [failed] = await claim(store, NOW, "dispatcher-a", 1);
    await record(store, failed!, NOW, { fail: true });
    const [succeeded] = await claim(store, NOW + 1, "dispatcher-a", 1);
    await record(store, succeeded!, NOW + 1);
    assert.equal(await claim(store, NOW + 10_000), []);

    assert.is(await store.retryDelivery(ACCOUNT, hook.webhookId, eventA!.id, NOW + 20_000), true);
    assert.is(await store.retryDelivery(ACCOUNT, hook.webhookId, "evt_missing", NOW + 20_000), false);
    assert.equal(await claim(store, NOW + 19_999), [], "due at the time given");
    const retried = await claim(store, NOW + 20_000);
    assert.equal(retried.map((d) => [d.eventId, d.attempts, d.firstAttemptAt]), [[eventA!.id, 1, NOW]]);
    await record(store, retried[0]!, NOW + 20_000);
    assert.is((await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10, status: "succeeded" })).deliveries.length, 2);

    assert.is(await store.replayDeliveries(ACCOUNT, hook.webhookId, since, NOW + 30_000), 3, "every event since then, the one before the endpoint too");
    const replayed = await drain(store, NOW + 30_000);
    assert.equal([...replayed.get(hook.webhookId)!].sort(byId), [oldEvent!.id, eventA!.id, eventB!.id].sort(byId));
    assert.is(await store.replayDeliveries(ACCOUNT, hook.webhookId, Date.now() + 60_000, NOW), 0, "nothing kept since a later instant");
    assert.is(await store.replayDeliveries(ACCOUNT, "wh_missing", since, NOW), 0);
  });

  test("webhooks: a retry names one endpoint's delivery of an event: the same event's delivery to another endpoint is left as it is", async (store) => {
    const [first, second] = [endpoint(), endpoint()];
    await store.insertWebhook(ACCOUNT, first);
    await store.insertWebhook(ACCOUNT, second);
    await store.insertWebhook(OTHER_ACCOUNT, second);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const [event] = await eventsOf(store, ACCOUNT);
    const sent = await drain(store, NOW);
    assert.equal([sent.get(first.webhookId), sent.get(second.webhookId)], [[event!.id], [event!.id]]);

    assert.is(await store.retryDelivery(ACCOUNT, first.webhookId, event!.id, NOW + 1), true);
    assert.is(await store.retryDelivery(OTHER_ACCOUNT, second.webhookId, event!.id, NOW + 1), false, "another account's endpoint of the same id was sent no such event");
    const retried = await claim(store, NOW + 1);
    assert.equal(retried.map((d) => [d.webhook.webhookId, d.eventId, d.attempts]), [[first.webhookId, event!.id, 1]]);
    const [other] = (await store.listDeliveries(ACCOUNT, second.webhookId, { limit: 10 })).deliveries;
    assert.equal([other!.eventId, other!.status, other!.attempts], [event!.id, "succeeded", 1]);
  });

  test("webhooks: a retry or replay asked while an attempt is in flight wins: the attempt's outcome is not recorded", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const inFlight = (await claim(store, NOW))[0]!;
    assert.is(await store.retryDelivery(ACCOUNT, hook.webhookId, inFlight.eventId, NOW + 1), true);
    assert.is(await record(store, inFlight, NOW + 2, { fail: true }), false, "the retry took the lease");
    const retried = (await claim(store, NOW + 3, "dispatcher-b"))[0];
    assert.is(retried?.eventId, inFlight.eventId, "due again at once, for any dispatcher");
    assert.is(await store.replayDeliveries(ACCOUNT, hook.webhookId, 0, NOW + 4), 1);
    assert.is(await record(store, retried!, NOW + 5, { owner: "dispatcher-b" }), false, "the replay took the lease");
    const { deliveries } = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 });
    assert.equal(deliveries.map((d) => [d.status, d.attempts]), [["pending", 0]]);
  });

  test("webhooks: a delivery's body is the event as the log reads when claimed: a deleted submission's creation carries only its tombstone", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    const [a] = seedRows(1) as [Submission];
    await store.insertSubmission(ACCOUNT, a);
    const [first] = await claim(store, NOW);
    assert.equal(JSON.parse(first!.event).data, a, "the whole submission while it exists");
    await record(store, first!, NOW, { fail: true, retryAt: NOW + 10 });
    await store.deleteSubmission(ACCOUNT, a.submissionId, "erasure");
    const retried = (await claim(store, NOW + 10)).find((d) => d.eventType === "submission.created");
    assert.is(retried?.eventId, first!.eventId);
    assert.equal(JSON.parse(retried!.event).data, { submissionId: a.submissionId, popupId: a.popupId }, "none of the erased data");
    assert.is(retried!.event, await eventAt(store, ACCOUNT, retried!.position));
  });

  test("webhooks: deleting an endpoint drops its deliveries; a lease on one records nothing", async (store) => {
    const gone = endpoint();
    const kept = endpoint();
    await store.insertWebhook(ACCOUNT, gone);
    await store.insertWebhook(ACCOUNT, kept);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const claimed = await claim(store, NOW);
    const leased = claimed.find((d) => d.webhook.webhookId === gone.webhookId)!;
    await record(store, claimed.find((d) => d.webhook.webhookId === kept.webhookId)!, NOW, { fail: true, retryAt: NOW + 1 });
    assert.is(await store.deleteWebhook(ACCOUNT, gone.webhookId), true);
    assert.is(await record(store, leased, NOW), false);
    assert.equal(await store.listDeliveries(ACCOUNT, gone.webhookId, { limit: 10 }), { deliveries: [], cursor: null });
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const later = await claim(store, NOW + LEASE_MS * 2);
    assert.ok(later.length === 2 && later.every((d) => d.webhook.webhookId === kept.webhookId), "only the kept endpoint's retry and new event");
  });

  test("webhooks: accounts never see each other's endpoints, events or deliveries", async (store) => {
    const mine = endpoint();
    const theirs = endpoint();
    await store.insertWebhook(ACCOUNT, mine);
    await store.insertWebhook(OTHER_ACCOUNT, theirs);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    const since = Date.now() - 60_000;
    assert.is(await store.getWebhook(OTHER_ACCOUNT, mine.webhookId), undefined);
    assert.equal((await store.listWebhooks(OTHER_ACCOUNT)).map((w) => w.webhookId), [theirs.webhookId]);
    assert.is(await store.updateWebhook(OTHER_ACCOUNT, mine.webhookId, { description: "taken" }), undefined);
    assert.is(await store.deleteWebhook(OTHER_ACCOUNT, mine.webhookId), false);
    assert.is(await store.replayDeliveries(OTHER_ACCOUNT, theirs.webhookId, since, NOW), 0, "no event of the other account is replayed");

    const claimed = await claim(store, NOW);
    assert.equal(claimed.map((d) => [d.accountId, d.webhook.webhookId]), [[ACCOUNT, mine.webhookId]]);
    await record(store, claimed[0]!, NOW, { fail: true });
    assert.equal(await store.listDeliveries(OTHER_ACCOUNT, mine.webhookId, { limit: 10 }), { deliveries: [], cursor: null });
    assert.is(await store.retryDelivery(OTHER_ACCOUNT, mine.webhookId, claimed[0]!.eventId, NOW), false);
    assert.is(await store.replayDeliveries(OTHER_ACCOUNT, mine.webhookId, since, NOW), 0);
    assert.is((await store.getWebhook(ACCOUNT, mine.webhookId))?.description, null);
  });

  test("webhooks: pruning the log drops the deliveries of the pruned events", async (store) => {
    const hook = endpoint();
    await store.insertWebhook(ACCOUNT, hook);
    const [old, fresh] = seedRows(2) as [Submission, Submission];
    await store.insertSubmission(ACCOUNT, old);
    const [delivery] = await claim(store, NOW);
    await record(store, delivery!, NOW, { fail: true, retryAt: NOW + 10 });
    assert.is((await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 })).deliveries[0]?.eventId, delivery!.eventId);
    const before = Date.now() + 1;
    while (Date.now() <= before) await new Promise((resolve) => setTimeout(resolve, 2));
    await store.insertSubmission(ACCOUNT, fresh);
    assert.is(await store.pruneEvents(before), 1);
    const { deliveries } = await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 10 });
    assert.ok(!deliveries.some((d) => d.eventId === delivery!.eventId), "the pruned event's delivery is gone");
    const sent = await drain(store, NOW + 100);
    assert.equal(sent.get(hook.webhookId), [(await eventsOf(store, ACCOUNT))[0]!.id], "only the kept event is sent");
  });
}
