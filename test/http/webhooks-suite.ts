/**
 * `/api/webhooks` over HTTP, in every runtime: endpoints managed by an account, their secrets
 * (shown once), the delivery log, retry and replay, and every refusal. Deliveries are made here
 * by claiming from the store the way a dispatcher does, so these cases need no receiver.
 */
import { suite } from "uvu";
import type { Delivery, Webhook } from "../../src/client/index.ts";
import * as assert from "uvu/assert";
import { type CompleteStore, isWebhookStore, type SubmissionStore, type WebhookStore } from "../../src/store.ts";
import { expectError, expectJson, type Fixture, ISO_UTC_MS, mount, type StartHttpTarget } from "./fixture.ts";

const WEBHOOK_FIELDS = ["createdAt", "description", "disabledAt", "popupId", "previousSecretExpiresAt", "types", "url", "webhookId"];
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const DAY_MS = 24 * 60 * 60 * 1000;

export function webhooksSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: webhooks`);
  let f: Fixture;
  t.before(async () => {
    f = await mount(start, createStore, { options: { maxWebhooksPerAccount: 3 } });
  });
  t.after(async () => {
    await (f as Fixture | undefined)?.stop();
  });

  const webhookStore = (): WebhookStore => {
    if (!isWebhookStore(f.store)) throw new Error("this suite needs a store that keeps webhooks (WebhookStore)");
    return f.store;
  };
  const create = async (key: string, body: object = { url: "https://crm.example.com/hooks" }) =>
    expectJson(await f.call("POST", "/api/webhooks", { key, json: body }), 201) as Webhook & { secret: string };
  const get = async (key: string, path: string) => expectJson(await f.call("GET", path, { key }), 200);

  /** Claims every due delivery as a dispatcher would and records `statusCode` for each (2xx succeeds, else retried in a minute). */
  const deliver = async (statusCode: number) => {
    const store = webhookStore();
    const now = Date.now();
    for (let round = 0; round < 100; round++) {
      const claimed = await store.claimDeliveries({ now, limit: 50, leaseMs: 60_000, owner: "suite" });
      if (claimed.length === 0) return;
      for (const delivery of claimed) {
        const ok = statusCode >= 200 && statusCode < 300;
        await store.recordDeliveryAttempt({
          accountId: delivery.accountId, webhookId: delivery.webhook.webhookId, position: delivery.position, owner: "suite", at: now, durationMs: 7,
          statusCode, error: ok ? null : `the receiver answered ${statusCode}`, status: ok ? "succeeded" : "pending", nextAttemptAt: ok ? null : now + 60_000,
        });
      }
    }
    throw new Error("deliveries never ran dry");
  };

  t("webhooks: a created endpoint shows its secret once; reading and listing never show it", async () => {
    const { key } = await f.account();
    const reply = await f.call("POST", "/api/webhooks", {
      key, json: { url: "https://crm.example.com/hooks", types: ["submission.created", "submission.created"], popupId: "newsletter", description: "CRM" },
    });
    const created = expectJson(reply, 201) as Webhook & { secret: string };
    assert.equal(Object.keys(created).sort(), [...WEBHOOK_FIELDS, "secret"].sort());
    assert.match(created.webhookId, /^wh_[0-9a-f]{32}$/);
    assert.match(created.secret, SECRET);
    assert.equal({ ...created, webhookId: "", secret: "", createdAt: "" }, {
      webhookId: "", url: "https://crm.example.com/hooks", types: ["submission.created"], popupId: "newsletter", description: "CRM",
      createdAt: "", disabledAt: null, previousSecretExpiresAt: null, secret: "",
    });
    assert.match(created.createdAt, ISO_UTC_MS);
    assert.is(reply.headers.get("location"), `/api/webhooks/${created.webhookId}`);

    const { secret, ...shown } = created;
    const one = await get(key, `/api/webhooks/${created.webhookId}`);
    assert.equal(one, shown);
    assert.equal(await get(key, "/api/webhooks"), { items: [shown] });
    for (const entry of f.log) assert.not.ok(JSON.stringify(entry).includes(secret), "the secret is never logged");

    const other = await f.account();
    assert.equal(await get(other.key, "/api/webhooks"), { items: [] }, "another account sees none");
    for (const [method, path] of [["GET", ""], ["PATCH", ""], ["DELETE", ""], ["POST", "/rotate-secret"], ["GET", "/deliveries"], ["POST", "/replay"]]) {
      const json = method === "PATCH" ? { enabled: false } : path === "/replay" ? { since: "2025-07-12T10:30:00Z" } : undefined;
      expectError(await f.call(method!, `/api/webhooks/${created.webhookId}${path}`, { key: other.key, json }), 404, "Webhook not found");
    }
    assert.equal(await get(key, `/api/webhooks/${created.webhookId}`), shown, "untouched by the other account");
  });

  t("webhooks: PATCH changes only what it names; null clears a filter; enabled false and true set and clear disabledAt", async () => {
    const { key } = await f.account();
    const { secret: _secret, ...created } = await create(key, { url: "https://crm.example.com/hooks", types: ["submission.deleted"], popupId: "p", description: "old" });
    const path = `/api/webhooks/${created.webhookId}`;
    const patch = async (json: object) => expectJson(await f.call("PATCH", path, { key, json }), 200) as Webhook;

    assert.equal(await patch({ url: "https://crm.example.com/v2/hooks", description: "new" }), { ...created, url: "https://crm.example.com/v2/hooks", description: "new" });
    assert.equal(await patch({ types: null, popupId: null, description: null }), {
      ...created, url: "https://crm.example.com/v2/hooks", types: null, popupId: null, description: null,
    });
    const disabled = await patch({ enabled: false });
    assert.match(disabled.disabledAt ?? "", ISO_UTC_MS);
    assert.is((await patch({ enabled: false })).disabledAt, disabled.disabledAt, "disabling again keeps the first time");
    assert.is((await patch({ enabled: true })).disabledAt, null);
    assert.equal(await get(key, path), { ...created, url: "https://crm.example.com/v2/hooks", types: null, popupId: null, description: null });
    expectError(await f.call("PATCH", "/api/webhooks/wh_00000000000000000000000000000000", { key, json: { enabled: true } }), 404, "Webhook not found");
  });

  t("webhooks: DELETE removes the endpoint and its delivery log; a second DELETE is 404", async () => {
    const { key, accountId } = await f.account();
    const created = await create(key);
    await f.store.insertSubmission(accountId, submissionFor());
    await deliver(204);
    const path = `/api/webhooks/${created.webhookId}`;
    assert.equal(expectJson(await f.call("DELETE", path, { key }), 200), { message: "Webhook deleted", webhookId: created.webhookId });
    expectError(await f.call("DELETE", path, { key }), 404, "Webhook not found");
    expectError(await f.call("GET", path, { key }), 404, "Webhook not found");
    expectError(await f.call("GET", `${path}/deliveries`, { key }), 404, "Webhook not found");
    assert.equal(await webhookStore().listDeliveries(accountId, created.webhookId, { limit: 10 }), { deliveries: [], cursor: null });
  });

  t("webhooks: rotate-secret answers a new secret once; the old one signs beside it for 24 hours", async () => {
    const { key, accountId } = await f.account();
    const created = await create(key);
    const before = Date.now();
    const rotated = expectJson(await f.call("POST", `/api/webhooks/${created.webhookId}/rotate-secret`, { key }), 200) as Webhook & { secret: string };
    assert.match(rotated.secret, SECRET);
    assert.is.not(rotated.secret, created.secret);
    const expires = Date.parse(rotated.previousSecretExpiresAt ?? "");
    assert.ok(expires >= before + DAY_MS && expires <= Date.now() + DAY_MS, `${rotated.previousSecretExpiresAt} is 24 hours on`);
    const { secret: _secret, ...shown } = rotated;
    assert.equal(await get(key, `/api/webhooks/${created.webhookId}`), shown);
    assert.equal((await webhookStore().getWebhook(accountId, created.webhookId))?.secrets, [rotated.secret, created.secret], "both sign, the new one first");
    for (const entry of f.log) assert.not.ok(JSON.stringify(entry).includes(rotated.secret), "the secret is never logged");
  });

  t("webhooks: the delivery log pages by cursor, newest first, and filters by status; retry and replay queue deliveries", async () => {
    const { key, accountId } = await f.account();
    const created = await create(key);
    const path = `/api/webhooks/${created.webhookId}`;
    const made = [submissionFor(), submissionFor(), submissionFor()];
    for (const s of made) await f.store.insertSubmission(accountId, s);
    await deliver(503);
    await f.store.setSubmissionStatus(accountId, made[0]!.submissionId, "completed");
    await deliver(204);

    const all = await get(key, `${path}/deliveries`) as { items: Delivery[]; nextCursor: string | null };
    assert.is(all.nextCursor, null);
    assert.equal(all.items.map((d) => [d.eventType, d.status]), [
      ["submission.status_changed", "succeeded"], ["submission.created", "pending"], ["submission.created", "pending"], ["submission.created", "pending"],
    ]);
    const [latest, failing] = all.items as [Delivery, Delivery];
    assert.equal(Object.keys(latest).sort(), ["attempts", "eventId", "eventType", "lastAttemptAt", "lastDurationMs", "lastError", "lastStatusCode", "nextAttemptAt", "status"]);
    assert.equal({ ...latest, eventId: "", lastAttemptAt: "" }, {
      eventId: "", eventType: "submission.status_changed", status: "succeeded", attempts: 1, lastAttemptAt: "", nextAttemptAt: null,
      lastStatusCode: 204, lastError: null, lastDurationMs: 7,
    });
    assert.equal([failing.attempts, failing.lastStatusCode, failing.lastError], [1, 503, "the receiver answered 503"]);
    assert.match(failing.nextAttemptAt ?? "", ISO_UTC_MS);
    const events = (await get(key, "/api/events") as { items: { id: string }[] }).items.map((e) => e.id);
    assert.equal(all.items.map((d) => d.eventId), [...events].reverse(), "each delivery is an event of the log, newest first");

    const paged: Delivery[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page = await get(key, `${path}/deliveries?limit=3${cursor && `&cursor=${cursor}`}`) as { items: Delivery[]; nextCursor: string | null };
      assert.ok(page.items.length <= 3);
      paged.push(...page.items);
      cursor = page.nextCursor;
    }
    assert.equal(paged, all.items);
    assert.equal((await get(key, `${path}/deliveries?status=succeeded`) as { items: Delivery[] }).items, [latest]);

    const retried = await f.call("POST", `${path}/deliveries/${failing.eventId}/retry`, { key });
    assert.equal(expectJson(retried, 202), { message: "Delivery queued", eventId: failing.eventId });
    const [again] = await webhookStore().claimDeliveries({ now: Date.now(), limit: 10, leaseMs: 60_000, owner: "suite" });
    assert.equal([again?.eventId, again?.attempts], [failing.eventId, 1], "due at once, its attempts counting on");
    expectError(await f.call("POST", `${path}/deliveries/evt_00000000000000000000000000000000/retry`, { key }), 404, /Delivery not found/);

    const replayed = await f.call("POST", `${path}/replay`, { key, json: { since: new Date(Date.now() - 60_000).toISOString() } });
    assert.equal(expectJson(replayed, 202), { replayed: 4 });
    assert.equal(expectJson(await f.call("POST", `${path}/replay`, { key, json: { since: new Date(Date.now() + 60_000).toISOString() } }), 202), { replayed: 0 });
  });

  t("webhooks: bad bodies and queries are 400 naming the field; https only unless private webhooks are allowed", async () => {
    const { key } = await f.account();
    const bad: [object | string, RegExp][] = [
      [{}, /url must be/],
      [{ url: "/hooks" }, /url must be an absolute http or https URL/],
      [{ url: "ftp://crm.example.com/hooks" }, /url must be an absolute http or https URL/],
      [{ url: `https://crm.example.com/${"x".repeat(2048)}` }, /url must be.*2048/],
      [{ url: "http://crm.example.com/hooks" }, /^url is refused \(only https URLs are delivered to\): .*--allow-private-webhooks \(the handler's allowPrivateWebhooks option\)/],
      [{ url: "https://127.0.0.1/hooks" }, /^url is refused \(127\.0\.0\.1 is a loopback address\)/],
      [{ url: "https://[::ffff:10.0.0.1]/hooks" }, /^url is refused \(.* is a private address\)/],
      [{ url: "https://169.254.169.254/latest" }, /^url is refused \(169\.254\.169\.254 is a cloud metadata address\)/],
      [{ url: "https://localhost/hooks" }, /^url is refused \(localhost names this machine\)/],
      [{ url: "https://crm.example.com/hooks", types: [] }, /types must be a non-empty list of event types/],
      [{ url: "https://crm.example.com/hooks", types: ["submission.made"] }, /types\[0\] must be/],
      [{ url: "https://crm.example.com/hooks", popupId: "" }, /popupId must be/],
      [{ url: "https://crm.example.com/hooks", description: "d".repeat(513) }, /description must be/],
      [{ url: "https://crm.example.com/hooks", secret: "whsec_mine" }, /secret is not a known webhook field/],
      ["[1]", /JSON object/],
    ];
    for (const [body, message] of bad) {
      const options = typeof body === "string" ? { key, rawJson: body } : { key, json: body };
      expectError(await f.call("POST", "/api/webhooks", options), 400, message);
    }
    const { webhookId } = await create(key);
    for (const [body, message] of [[{ enabled: "yes" }, /enabled must be boolean/], [{ url: null }, /url must be/], [{ types: [] }, /types must be/]] as const) {
      expectError(await f.call("PATCH", `/api/webhooks/${webhookId}`, { key, json: body }), 400, message);
    }
    for (const [query, name] of [["status=lost", "status"], ["limit=0", "limit"], ["limit=101", "limit"], ["cursor=abc", "cursor"]]) {
      expectError(await f.call("GET", `/api/webhooks/${webhookId}/deliveries?${query}`, { key }), 400, new RegExp(name!));
    }
    for (const body of [{}, { since: "yesterday" }, { since: "2025-07-12T10:30:00Z", until: "now" }]) {
      expectError(await f.call("POST", `/api/webhooks/${webhookId}/replay`, { key, json: body }), 400, /since|until/);
    }

    const local = await mount(start, createStore, { options: { allowPrivateWebhooks: true } });
    try {
      const account = await local.account();
      const reply = await local.call("POST", "/api/webhooks", { key: account.key, json: { url: "http://127.0.0.1:9999/hooks" } });
      assert.is((expectJson(reply, 201) as Webhook).url, "http://127.0.0.1:9999/hooks");
    } finally {
      await local.stop();
    }
  });

  t("webhooks: at most the handler's number of endpoints per account (409); a secret key is needed", async () => {
    const site = await f.site(["shop.example.com"]);
    for (let i = 0; i < 3; i++) await create(site.key, { url: `https://crm.example.com/${i}` });
    expectError(await f.call("POST", "/api/webhooks", { key: site.key, json: { url: "https://crm.example.com/4" } }), 409, /3 webhooks, the most it may have \(3\): delete one first/);
    const other = await f.account();
    await create(other.key);

    expectError(await f.call("GET", "/api/webhooks"), 401);
    expectError(await f.call("POST", "/api/webhooks", { key: site.publishableKey, json: { url: "https://crm.example.com/x" }, headers: { origin: "https://shop.example.com" } }), 403);
  });

  t("webhooks: a store that keeps no webhooks answers 501", async () => {
    const plain = await mount(start, createStore, { wrapStore: withoutWebhooks });
    try {
      const { key } = await plain.account();
      expectError(await plain.call("GET", "/api/webhooks", { key }), 501, /keeps no webhooks/);
      expectError(await plain.call("POST", "/api/webhooks", { key, json: { url: "https://crm.example.com/hooks" } }), 501, /keeps no webhooks/);
    } finally {
      await plain.stop();
    }
  });

  t.run();
}

let submissions = 0;

function submissionFor() {
  return {
    submissionId: crypto.randomUUID(), popupId: "popup_hooks", data: { email: `lead${++submissions}@example.com` }, domain: "example.com",
    userAgent: "agent", device: "desktop" as const, status: "pending" as const, createdAt: new Date().toISOString(),
  };
}

/** The store with its `WebhookStore` methods hidden: a custom store that keeps no webhooks. */
function withoutWebhooks(store: CompleteStore): SubmissionStore {
  const hidden = new Set(["insertWebhook", "getWebhook", "listWebhooks", "updateWebhook", "deleteWebhook", "claimDeliveries", "recordDeliveryAttempt", "listDeliveries", "retryDelivery", "replayDeliveries"]);
  return Object.fromEntries(Object.entries(store).filter(([name]) => !hidden.has(name))) as unknown as SubmissionStore;
}
