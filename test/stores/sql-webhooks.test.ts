/**
 * What the SQL webhook store must do beyond the shared suite: its claim reads pending
 * deliveries through their indexes (never the delivery history), claimers on separate
 * connections to one file never hold one delivery at once, and a claimed event is the text the
 * change log shows.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { SqlDriver, SqlResult, SqlStatement } from "../../src/stores/sql/driver.ts";
import { createLibsqlStore, libsqlDriver } from "../../src/stores/libsql/index.ts";
import { migrate } from "../../src/stores/sql/migrate.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import { pruneEvents } from "../../src/stores/sql/events.ts";
import { DELIVERIES_OF_PRUNED_EVENTS, sqlWebhookStore } from "../../src/stores/sql/webhooks.ts";
import { ClaimAfterRecordingFailed, eventTexts, type WebhookRecord } from "../../src/store.ts";
import type { Submission } from "../../src/submission.ts";

const test = suite("SQL webhook store");

const ACCOUNT = "acct";

function endpoint(webhookId: string, fields: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    webhookId, url: `https://hooks.example.com/${webhookId}`, types: null, popupId: null, description: null,
    createdAt: new Date().toISOString(), disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null,
    failingSince: null, ...fields,
  };
}

function submission(popupId = "popup"): Submission {
  return {
    submissionId: crypto.randomUUID(), popupId, data: { email: "jane@example.com" }, domain: "example.com",
    userAgent: "agent", device: "desktop", status: "pending", createdAt: new Date().toISOString(),
  };
}

/** Every statement the store's methods send, each with its query plan on a migrated database. */
async function plansOf(run: (driver: SqlDriver) => Promise<unknown>): Promise<{ sql: string; plan: string }[]> {
  const client = createClient({ url: ":memory:" });
  try {
    await migrate(libsqlDriver(client));
    const sent: SqlStatement[] = [];
    const empty: SqlResult = { rows: [], rowsAffected: 0 };
    // A claim reads whether it may find work before it writes, and a prune whether the oldest
    // event is old enough: say they may, so that their writes are sent too.
    const mayClaim: SqlResult = { rows: [{ maybe: 1 }], rowsAffected: 0 };
    const oldestIsOld: SqlResult = { rows: [{ at: 0 }], rowsAffected: 0 };
    const answer = (statement: SqlStatement) =>
      /\bAS maybe\b/.test(statement.sql) ? mayClaim : /^SELECT at FROM events\b/.test(statement.sql) ? oldestIsOld : empty;
    await run({
      execute: async (statement) => (sent.push(statement), answer(statement)),
      batch: async (statements) => (sent.push(...statements), statements.map(answer)),
    });
    const plans = [];
    for (const statement of sent) {
      const { rows } = await client.execute({ sql: `EXPLAIN QUERY PLAN ${statement.sql}`, args: [...(statement.args ?? [])] });
      plans.push({ sql: statement.sql, plan: rows.map((row) => String(row.detail)).join(" | ") });
    }
    return plans;
  } finally {
    client.close();
  }
}

test("a claim, a listing, a retry, an attempt and a prune find their deliveries by index: none reads every delivery", async () => {
  const plans = await plansOf(async (driver) => {
    const store = sqlWebhookStore(driver, (statements) => driver.batch(statements, "write"));
    await store.claimDeliveries({ now: 1, limit: 10, leaseMs: 5, owner: "o" });
    await store.listDeliveries(ACCOUNT, "w", { limit: 10, status: "failed", after: 5 });
    await store.retryDelivery(ACCOUNT, "w", "evt_0", 1);
    await store.recordDeliveryAttempt({
      accountId: ACCOUNT, webhookId: "w", position: 1, owner: "o", at: 1, durationMs: 1, statusCode: 200, error: null, status: "succeeded", nextAttemptAt: null,
    });
    await pruneEvents(driver, 1, [DELIVERIES_OF_PRUNED_EVENTS]);
  });
  assert.ok(plans.some(({ sql }) => sql.startsWith("DELETE FROM webhook_deliveries")), "the prune's statement is among them");
  assert.ok(plans.some(({ sql }) => sql.includes("lease_claim = ?5")), "the claim's leasing statement is among them");
  // (The endpoints are scanned: there are few. The prune walks the log's oldest positions, a bounded batch.)
  for (const { sql, plan } of plans) assert.not.match(plan, /SCAN webhook_deliveries\b/, `${sql}\n${plan}`);
});

test("a claim that finds nothing to do takes no write lock: with no endpoint, with every due delivery leased, and once all are sent", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const driver = libsqlDriver(client);
    const store = await createSqlStore(driver);
    let writes = 0;
    const outbox = sqlWebhookStore(driver, (statements) => (writes++, driver.batch(statements, "write")));
    const now = Date.now();
    const claim = () => outbox.claimDeliveries({ now, limit: 10, leaseMs: 60_000, owner: "o" });
    await store.insertSubmission(ACCOUNT, submission());
    assert.equal(await claim(), []);
    assert.is(writes, 0, "no endpoint: no write");
    await store.insertWebhook(ACCOUNT, endpoint("w"));
    await store.insertSubmission(ACCOUNT, submission());
    const [delivery] = await claim();
    assert.ok(delivery, "the new event is claimed");
    assert.is(writes, 1);
    assert.equal(await claim(), []);
    assert.is(writes, 1, "its delivery leased: no write");
    await outbox.recordDeliveryAttempt({
      accountId: ACCOUNT, webhookId: "w", position: delivery.position, owner: "o", at: now, durationMs: 1, statusCode: 200, error: null,
      status: "succeeded", nextAttemptAt: null,
    });
    assert.equal(await claim(), []);
    assert.is(writes, 2, "sent: no write but the outcome's");
    await store.insertSubmission(ACCOUNT, submission());
    assert.is((await claim()).length, 1, "a later event is claimed");
  } finally {
    client.close();
  }
});

test("when the read after a combined write of outcomes and claim fails, the call says which outcomes are recorded; the leases run out", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const driver = libsqlDriver(client);
    const store = await createSqlStore(driver);
    let failRead = false;
    const faulty: SqlDriver = {
      execute: (statement) => driver.execute(statement),
      batch: async (statements, mode) => {
        if (mode === "read" && failRead) {
          failRead = false;
          throw new Error("the connection dropped");
        }
        return driver.batch(statements, mode);
      },
    };
    const outbox = sqlWebhookStore(faulty, (statements) => driver.batch(statements, "write"));
    const now = Date.now();
    const claim = { now, limit: 10, leaseMs: 60_000, owner: "o" };
    await store.insertWebhook(ACCOUNT, endpoint("w"));
    await store.insertSubmission(ACCOUNT, submission());
    const [first] = await outbox.claimDeliveries(claim);
    await store.insertSubmission(ACCOUNT, submission());
    failRead = true;
    const attempt = {
      accountId: ACCOUNT, webhookId: "w", position: first!.position, owner: "o", at: now, durationMs: 1, statusCode: 200, error: null,
      status: "succeeded" as const, nextAttemptAt: null,
    };
    const failed = await outbox.recordAndClaimDeliveries!([attempt], { ...claim, now: now + 1 }).then(() => undefined, (error: unknown) => error);
    assert.instance(failed, ClaimAfterRecordingFailed);
    assert.equal((failed as ClaimAfterRecordingFailed).recorded, [true]);
    const { deliveries } = await store.listDeliveries(ACCOUNT, "w", { limit: 10 });
    assert.equal(deliveries.map((d) => [d.eventId, d.status]), [[deliveries[0]!.eventId, "pending"], [first!.eventId, "succeeded"]], "the outcome stands");
    assert.equal(await outbox.claimDeliveries({ ...claim, now: now + 2 }), [], "what the failed call leased stays leased");
    assert.is((await outbox.claimDeliveries({ ...claim, now: now + 60_002 })).length, 1, "until its lease runs out");
  } finally {
    client.close();
  }
});

test("a claimed event is the text the change log shows, as it reads now", async () => {
  const store = await createLibsqlStore({ url: ":memory:" });
  try {
    await store.insertWebhook(ACCOUNT, endpoint("w"));
    const [kept, deleted] = [submission(), submission()];
    await store.insertSubmission(ACCOUNT, kept);
    await store.insertSubmission(ACCOUNT, deleted);
    await store.setSubmissionStatus(ACCOUNT, kept.submissionId, "completed");
    await store.deleteSubmission(ACCOUNT, deleted.submissionId);
    const claimed = await store.claimDeliveries({ now: Date.now(), limit: 10, leaseMs: 60_000, owner: "o" });
    const log = await store.readEventsAsJson(ACCOUNT, { limit: 100 });
    assert.ok(!log.expired);
    assert.equal(claimed.map((delivery) => delivery.event), eventTexts(log));
    assert.equal(claimed.map((delivery) => delivery.eventType), ["submission.created", "submission.created", "submission.status_changed", "submission.deleted"]);
    assert.equal(claimed.map((delivery) => delivery.eventId), eventTexts(log).map((text) => (JSON.parse(text) as { id: string }).id));
    assert.equal((JSON.parse(claimed[0]!.event) as { data: Submission }).data, kept, "created as pending, whatever its status now");
  } finally {
    await store.close();
  }
});

test("claimers on separate connections to one file never hold one delivery at once, and every delivery is sent", async () => {
  const dir = mkdtempSync(join(tmpdir(), "formsink-webhooks-"));
  const url = `file:${join(dir, "test.db")}`;
  const stores = [await createLibsqlStore({ url }), await createLibsqlStore({ url })];
  try {
    const [writer] = stores as [Awaited<ReturnType<typeof createLibsqlStore>>];
    await writer.insertWebhook(ACCOUNT, endpoint("a"));
    await writer.insertWebhook(ACCOUNT, endpoint("b"));
    const count = 60;
    await writer.importSubmissions(ACCOUNT, Array.from({ length: count }, () => submission()));
    const held = new Set<string>();
    const sent: string[] = [];
    const now = Date.now();
    const claimer = async (store: typeof writer, owner: string) => {
      for (let idle = 0; idle < 3; ) {
        const claimed = await store.claimDeliveries({ now, limit: 7, leaseMs: 60_000, owner });
        idle = claimed.length === 0 ? idle + 1 : 0;
        for (const delivery of claimed) {
          const key = `${delivery.webhook.webhookId} ${delivery.position}`;
          assert.not.ok(held.has(key), `${key} leased twice at once`);
          held.add(key);
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
        for (const delivery of claimed) {
          const key = `${delivery.webhook.webhookId} ${delivery.position}`;
          held.delete(key);
          sent.push(key);
          const recorded = await store.recordDeliveryAttempt({
            accountId: ACCOUNT, webhookId: delivery.webhook.webhookId, position: delivery.position, owner, at: now, durationMs: 1,
            statusCode: 200, error: null, status: "succeeded", nextAttemptAt: null,
          });
          assert.ok(recorded, `${owner} lost its lease on ${key}`);
        }
      }
    };
    await Promise.all([claimer(stores[0]!, "one"), claimer(stores[1]!, "two"), claimer(stores[0]!, "three"), claimer(stores[1]!, "four")]);
    assert.is(sent.length, 2 * count, "each delivery sent once");
    assert.is(new Set(sent).size, 2 * count);
  } finally {
    for (const store of stores) await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
