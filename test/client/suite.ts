/**
 * The typed client against a real formsink server. Runtime-agnostic (no `node:*`): a target
 * starts a server however its runtime does and hands over its URL, a key and a way to put rows
 * straight into its store.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createClient, type Fetch, type FormsinkClient, FormsinkError, type Submission } from "../../src/client/index.ts";

export interface ClientTarget {
  /** Where the API is, with the server's base path. */
  baseUrl: string;
  /** A secret key of a fresh, empty account. */
  newAccount(): Promise<{ key: string; insert(rows: Submission[]): Promise<void> }>;
  /** The fetch the clients use, when the server is reached in some special way (default: the global one). */
  fetch?: Fetch;
  stop(): Promise<void>;
}

export type StartClientTarget = (options: { basePath: string }) => Promise<ClientTarget>;

const T0 = Date.UTC(2025, 6, 12, 10, 30);

/** `count` rows, `perMillisecond` of them sharing each millisecond, statuses and popups mixed. */
function rows(count: number, perMillisecond: number): Submission[] {
  return Array.from({ length: count }, (_, i): Submission => ({
    submissionId: crypto.randomUUID(),
    popupId: `popup_${i % 3}`,
    data: { i, email: `u${i}@example.com` },
    domain: "example.com",
    userAgent: "agent",
    device: "desktop",
    status: i % 4 === 0 ? "completed" : "pending",
    createdAt: new Date(T0 + Math.floor(i / perMillisecond)).toISOString(),
  }));
}

function order(list: Submission[], direction: "asc" | "desc"): string[] {
  const sign = direction === "asc" ? 1 : -1;
  return [...list]
    .sort((a, b) => sign * (Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.submissionId < b.submissionId ? -1 : 1)))
    .map((s) => s.submissionId);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function rejection(promise: Promise<unknown>): Promise<FormsinkError> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, FormsinkError);
    assert.instance(error, Error);
    return error as FormsinkError;
  }
  throw new Error("expected the call to fail");
}

export function clientSuite(name: string, start: StartClientTarget, options: { basePath?: string } = {}): void {
  const t = suite<{ target: ClientTarget }>(`client: ${name}`);
  t.before(async (context) => {
    context.target = await start({ basePath: options.basePath ?? "" });
  });
  t.after(async ({ target }) => target.stop());

  const clientFor = async (target: ClientTarget): Promise<FormsinkClient & { insert(rows: Submission[]): Promise<void> }> => {
    const account = await target.newAccount();
    return Object.assign(createClient({ baseUrl: target.baseUrl, apiKey: account.key, fetch: target.fetch }), { insert: account.insert });
  };

  t("create, get, list, updateStatus, delete: each answers what the API does", async ({ target }) => {
    const client = await clientFor(target);
    const created = await client.create({ popupId: "popup_1", data: { email: "jane@example.com", tags: ["a"] }, domain: "example.com", device: "mobile" });
    assert.is(created.popupId, "popup_1");
    assert.is(created.status, "pending");
    assert.equal(await client.get(created.submissionId), created);
    const page = await client.list({ popupId: "popup_1", limit: 5 });
    assert.equal(page, { items: [created], limit: 5, offset: 0, total: 1, nextCursor: null });
    assert.equal(await client.updateStatus(created.submissionId, "completed"), {
      message: "Submission status updated", submissionId: created.submissionId, status: "completed",
    });
    assert.is((await client.list({ status: "completed" })).total, 1);
    assert.equal(await client.delete(created.submissionId), { message: "Submission deleted", submissionId: created.submissionId });
    const gone = await rejection(client.get(created.submissionId));
    assert.is(gone.status, 404);
    assert.is(gone.message, "Submission not found");
  });

  t("erase, getErasure, setRetention, getRetention, previewRetention: each answers what the API does", async ({ target }) => {
    const client = await clientFor(target);
    const created = await client.create({ popupId: "popup_1", data: { email: "Jane@Example.com" } });
    const dry = await client.erase({ field: "email", value: "jane@example.com", dryRun: true });
    assert.equal([dry.erasureId, dry.matched, dry.deleted, dry.submissionIds], [null, 1, 0, [created.submissionId]]);
    const receipt = await client.erase({ field: "email", value: "jane@example.com" });
    assert.equal([receipt.matched, receipt.deleted, receipt.submissionIds], [1, 1, [created.submissionId]]);
    assert.equal(await client.getErasure(receipt.erasureId!), receipt);
    assert.is((await rejection(client.get(created.submissionId))).status, 404);
    const refused = await rejection(client.erase({ field: "phone", value: "1" }));
    assert.is(refused.status, 400);

    assert.equal(await client.setRetention([{ status: "completed", olderThanDays: 90 }]), { rules: [{ status: "completed", olderThanDays: 90 }] });
    assert.equal(await client.getRetention(), { rules: [{ status: "completed", olderThanDays: 90 }] });
    const preview = await client.previewRetention();
    assert.equal(preview.rules.map(({ olderThanDays, matched }) => [olderThanDays, matched]), [[90, 0]]);
  });

  t("events: pages of the change log by cursor, filtered by type and popup", async ({ target }) => {
    const client = await clientFor(target);
    const kept = await client.create({ popupId: "popup_1", data: { n: 1 } });
    const gone = await client.create({ popupId: "popup_2", data: { n: 2 } });
    await client.updateStatus(kept.submissionId, "completed");
    await client.delete(gone.submissionId);
    const first = await client.events({ limit: 2 });
    assert.equal(first.items.map((e) => e.type), ["submission.created", "submission.created"]);
    assert.equal(first.items[0]!.data, kept);
    const rest = await client.events({ after: first.nextCursor });
    assert.equal(rest.items.map((e) => [e.type, e.data]), [
      ["submission.status_changed", { submissionId: kept.submissionId, popupId: "popup_1", status: "completed", previousStatus: "pending" }],
      ["submission.deleted", { submissionId: gone.submissionId, popupId: "popup_2", reason: "api" }],
    ]);
    assert.equal((await client.events({ after: rest.nextCursor })).items, []);
    const deletions = await client.events({ type: ["submission.deleted", "submission.status_changed"], popupId: "popup_2" });
    assert.equal(deletions.items.map((e) => e.type), ["submission.deleted"]);
    const malformed = await rejection(client.events({ after: "not-a-cursor" }));
    assert.is(malformed.status, 400);
    assert.match(malformed.message, /after/);
  });

  t("webhooks: create (the secret once), list, get, update, rotate, the delivery log, replay, retry, delete", async ({ target }) => {
    const client = await clientFor(target);
    const created = await client.createWebhook({ url: "https://crm.example.com/hooks", types: ["submission.created"], description: "CRM" });
    assert.match(created.secret, /^whsec_/);
    const { secret, ...shown } = created;
    assert.equal(await client.getWebhook(created.webhookId), shown);
    assert.equal(await client.listWebhooks(), { items: [shown] });
    const changed = await client.updateWebhook(created.webhookId, { enabled: false, types: null });
    assert.equal([changed.types, typeof changed.disabledAt], [null, "string"]);
    const rotated = await client.rotateWebhookSecret(created.webhookId);
    assert.is.not(rotated.secret, secret);
    assert.type(rotated.previousSecretExpiresAt, "string");

    const before = new Date(Date.now() - 1000);
    const lead = await client.create({ popupId: "popup_1", data: { email: "jane@example.com" } });
    assert.equal(await client.webhookDeliveries(created.webhookId), { items: [], nextCursor: null }, "a disabled endpoint takes no new event");
    assert.equal(await client.replayWebhook(created.webhookId, before), { replayed: 1 });
    const { items } = await client.webhookDeliveries(created.webhookId, { status: "pending", limit: 5 });
    const [createdEvent] = (await client.events({ type: ["submission.created"] })).items.filter((e) => e.data.submissionId === lead.submissionId);
    assert.equal(items.map((d) => [d.eventId, d.eventType, d.status, d.attempts]), [[createdEvent!.id, "submission.created", "pending", 0]]);
    assert.equal(await client.retryWebhookDelivery(created.webhookId, createdEvent!.id), { message: "Delivery queued", eventId: createdEvent!.id });
    assert.is((await rejection(client.retryWebhookDelivery(created.webhookId, "evt_missing"))).status, 404);
    assert.match((await rejection(client.webhookDeliveries(created.webhookId, { limit: 0 }))).message, /limit/);

    assert.equal(await client.deleteWebhook(created.webhookId), { message: "Webhook deleted", webhookId: created.webhookId });
    const gone = await rejection(client.getWebhook(created.webhookId));
    assert.equal([gone.status, gone.message], [404, "Webhook not found"]);
  });

  t("errors are FormsinkErrors carrying the status and the API's message", async ({ target }) => {
    const client = await clientFor(target);
    const tooMany = await rejection(client.list({ limit: 101 }));
    assert.is(tooMany.status, 400);
    assert.is(tooMany.message, "limit must be at most 100 (was 101)");
    const badBody = await rejection(client.create({ popupId: "", data: {} }));
    assert.is(badBody.status, 400);
    assert.match(badBody.message, /popupId/);
    const wrongKey = createClient({ baseUrl: target.baseUrl, apiKey: "fs_sk_nonsense", fetch: target.fetch });
    const unauthorized = await rejection(wrongKey.list());
    assert.is(unauthorized.status, 401);
    assert.is(unauthorized.message, "Invalid API key");
    assert.is((await rejection(all(wrongKey.export()))).status, 401);
    // an answer that is not the API's (a wrong base URL): the status line is the message
    const elsewhere = createClient({ baseUrl: new URL("/nothing-here/", target.baseUrl), apiKey: "x", fetch: target.fetch });
    const notFound = await rejection(elsewhere.list());
    assert.is(notFound.status, 404);
  });

  t("export: every matching submission, exactly, as an async iterator; instants as Dates", async ({ target }) => {
    const client = await clientFor(target);
    const data = rows(2345, 3);
    await client.insert(data);
    const byId = new Map(data.map((s) => [s.submissionId, s]));
    const everything = await all(client.export());
    assert.equal(everything.map((s) => s.submissionId), order(data, "desc"));
    for (const submission of everything) assert.equal(submission, byId.get(submission.submissionId));
    const after = new Date(T0 + 100);
    const filtered = await all(client.export({ orderBy: "created_at", status: "completed", popupId: "popup_1", createdAfter: after }));
    const expected = data.filter((s) => s.status === "completed" && s.popupId === "popup_1" && Date.parse(s.createdAt) > after.getTime());
    assert.equal(filtered.map((s) => s.submissionId), order(expected, "asc"));
    // a list page's nextCursor: the export goes on after that page
    const page = await client.list({ orderBy: "created_at", status: "completed", limit: 7 });
    const rest = await all(client.export({ orderBy: "created_at", status: "completed", cursor: page.nextCursor! }));
    assert.equal(rest.map((s) => s.submissionId), order(data.filter((s) => s.status === "completed"), "asc").slice(7));
  });

  t("export: stopping early ends the iterator cleanly, and the client stays usable", async ({ target }) => {
    const client = await clientFor(target);
    await client.insert(rows(3000, 1));
    let taken = 0;
    for await (const _ of client.export()) if (++taken === 10) break;
    assert.is(taken, 10);
    assert.is((await client.list()).total, 3000);
    const controller = new AbortController();
    const iterator = client.export({}, { signal: controller.signal });
    await iterator.next();
    controller.abort();
    let aborted = false;
    try {
      for await (const _ of iterator);
    } catch {
      aborted = true;
    }
    assert.ok(aborted, "an aborted export throws");
  });

  t("listAll: pages through everything exactly once, in order, even with more rows in one millisecond than a page holds", async ({ target }) => {
    const client = await clientFor(target);
    const data = [...rows(400, 7), ...rows(60, 60).map((s) => ({ ...s, createdAt: new Date(T0 + 1000).toISOString() }))];
    await client.insert(data);
    for (const orderBy of ["created_at", "created_at_desc"] as const) {
      for (const pageSize of [7, 25, 100]) {
        const seen = await all(client.listAll({ orderBy }, { pageSize }));
        assert.equal(seen.map((s) => s.submissionId), order(data, orderBy === "created_at" ? "asc" : "desc"), `${orderBy} by ${pageSize}`);
      }
    }
    const pending = await all(client.listAll({ status: "pending", createdBefore: new Date(T0 + 30).toISOString() }, { pageSize: 9 }));
    assert.equal(pending.map((s) => s.submissionId), order(data.filter((s) => s.status === "pending" && Date.parse(s.createdAt) < T0 + 30), "desc"));
  });

  t("list: nextCursor gives the next page, with the total; with offset, or other filters, it is a 400", async ({ target }) => {
    const client = await clientFor(target);
    const data = rows(25, 3);
    await client.insert(data);
    const expected = order(data.filter((s) => s.status === "pending"), "asc");
    const seen: string[] = [];
    let page = await client.list({ status: "pending", orderBy: "created_at", limit: 4 });
    for (;;) {
      assert.is(page.total, expected.length);
      seen.push(...page.items.map((s) => s.submissionId));
      if (page.nextCursor === null) break;
      page = await client.list({ status: "pending", orderBy: "created_at", limit: 4, cursor: page.nextCursor });
    }
    assert.equal(seen, expected);
    const cursor = (await client.list({ status: "pending", limit: 2 })).nextCursor!;
    assert.is((await rejection(client.list({ status: "pending", limit: 2, cursor, offset: 2 }))).status, 400);
    assert.match((await rejection(client.list({ status: "completed", limit: 2, cursor }))).message, /other filters/);
  });

  t("listAll: submissions created while paging are neither repeated nor shift what follows", async ({ target }) => {
    const client = await clientFor(target);
    const data = rows(50, 1);
    await client.insert(data);
    const seen: string[] = [];
    for await (const submission of client.listAll({}, { pageSize: 10 })) {
      seen.push(submission.submissionId);
      // a newer submission arrives after every page's first item; newest-first paging must not repeat
      if (seen.length % 10 === 1) await client.create({ popupId: "late", data: {} });
    }
    assert.equal(seen.slice(-50), order(data, "desc"));
    assert.is(new Set(seen).size, seen.length);
  });

  t.run();
}
