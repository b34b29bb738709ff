/**
 * The PostgreSQL store against a real PostgreSQL server: a throwaway cluster started by the test
 * (test/support/postgres.ts), one fresh database per store the suites open, directly and through
 * PgBouncer in transaction mode (no prepared statements, no session state). Then what only
 * several stores on one database can show: migrations raced at start, the change log
 * followed while two stores write, and webhook deliveries claimed by both at once.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import postgres from "postgres";
import { createApiKey, revokeApiKey } from "../../src/auth/keys.ts";
import { createPostgresStore, openPostgresStore } from "../../src/stores/postgres/index.ts";
import { followLog, readAll } from "../../src/testing/event-reading.ts";
import { migratePostgres, POSTGRES_SCHEMA_VERSION } from "../../src/stores/postgres/migrations.ts";
import { postgresStore } from "../../src/stores/postgres/store.ts";
import type { Submission } from "../../src/submission.ts";
import { type ClaimedDelivery, type DeliveryAttempt, recordAndClaimDeliveries } from "../../src/store.ts";
import { sharedCluster, sharedPgBouncer, startPostgresCluster, stopClusterAfterSuites, storeOnNewDatabase } from "../support/postgres.ts";
import { testCompleteStore } from "./complete-store.ts";

testCompleteStore("PostgreSQL", storeOnNewDatabase);
testCompleteStore("PostgreSQL through PgBouncer in transaction mode", async (options) => storeOnNewDatabase({ ...options, pooler: await sharedPgBouncer() }));

const shared = suite("PostgreSQL: several stores on one database");

shared("servers starting at once on a new database: one migrates, every one opens", async () => {
  const database = await (await sharedCluster()).createDatabase();
  try {
    const opened = await Promise.all(Array.from({ length: 6 }, () => openPostgresStore({ url: database.url, max: 2 })));
    try {
      const upgrades = opened.map(({ upgrade }) => upgrade);
      assert.equal(upgrades.filter(({ from }) => from === 0), [{ from: 0, to: POSTGRES_SCHEMA_VERSION }], "exactly one created the schema");
      assert.ok(upgrades.every(({ to }) => to === POSTGRES_SCHEMA_VERSION));
      await opened[0]!.store.insertSubmission("a", submission(0));
      assert.is((await opened[5]!.store.listSubmissions("a", { order: "asc", limit: 10, offset: 0 })).total, 1);
    } finally {
      await Promise.all(opened.map(({ store }) => store.close()));
    }
  } finally {
    await database.drop();
  }
});

shared("two stores writing one account: a follower of the log sees every event once, in the one order", async () => {
  const database = await (await sharedCluster()).createDatabase();
  const [a, b] = await Promise.all([openPostgresStore({ url: database.url }), openPostgresStore({ url: database.url })]).then((all) => all.map((o) => o.store));
  try {
    let writing = true;
    const follower = followLog(a!, "acct", 7, () => writing);
    const writes = Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const store = i % 2 === 0 ? a! : b!;
        const row = submission(i);
        await store.insertSubmission("acct", row);
        if (i % 3 === 0) await (i % 2 === 0 ? b! : a!).setSubmissionStatus("acct", row.submissionId, "completed");
        if (i % 4 === 0) await store.deleteSubmission("acct", row.submissionId);
      }),
    ).finally(() => (writing = false));
    // Together, so that a failed write stops the follower and neither is left unhandled.
    const [seen] = await Promise.all([follower, writes]);
    const all = (await readAll(b!, "acct", {}, 1000)).events;
    assert.is(all.length, 120 + 40 + 30, "one event per change");
    assert.equal(seen.map((e) => e.id), all.map((e) => e.id), "the follower saw the whole log in its one order");
  } finally {
    await Promise.all([a!.close(), b!.close()]);
    await database.drop();
  }
});

for (const combined of [false, true]) shared(`dispatchers on two stores claiming at once${combined ? ", each writing its outcomes with its next claim" : ""}: no delivery is claimed twice, each endpoint's first attempts go in commit order`, async () => {
  const database = await (await sharedCluster()).createDatabase();
  const [a, b] = await Promise.all([openPostgresStore({ url: database.url }), openPostgresStore({ url: database.url })]).then((all) => all.map((o) => o.store));
  try {
    const hooks = ["wh_one", "wh_two", "wh_three"];
    for (const webhookId of hooks) {
      await a!.insertWebhook("acct", {
        webhookId, url: "https://receiver.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
        disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
      });
    }
    const EVENTS = 150;
    const problems: string[] = [];
    /** Per endpoint, the positions claimed (each attempt succeeds, so none may be claimed again). */
    const attempted = new Map(hooks.map((id) => [id, new Set<number>()]));
    // Half the events are committed before the dispatchers start, half while they claim.
    for (let i = 0; i < EVENTS / 2; i++) await a!.insertSubmission("acct", submission(i));
    let writing = true;
    const writers = Promise.all(
      Array.from({ length: 3 }, async (_, w) => {
        for (let i = 0; i < EVENTS / 6; i++) await (w % 2 === 0 ? a! : b!).insertSubmission("acct", submission(1000 + w * 100 + i));
      }),
    ).finally(() => (writing = false));
    const done = () => !writing && [...attempted.values()].every((positions) => positions.size === EVENTS);
    const claimers = Array.from({ length: 6 }, async (_, c) => {
      const store = c % 2 === 0 ? a! : b!;
      const owner = `dispatcher-${c}`;
      const deadline = Date.now() + 60_000;
      /** The outcomes of the last claim's deliveries, written with the next claim when `combined`. */
      let made: DeliveryAttempt[] = [];
      while (!done() && problems.length === 0) {
        if (Date.now() > deadline) throw new Error("the deliveries were not all claimed in time");
        const claim = { now: Date.now(), limit: 2 + c * 2, leaseMs: 60_000, owner };
        let claimed: ClaimedDelivery[];
        if (combined) {
          let recorded: boolean[];
          ({ recorded, claimed } = await recordAndClaimDeliveries(store, made, claim));
          if (recorded.includes(false)) problems.push(`${owner} lost a lease it held`);
        } else claimed = await store.claimDeliveries(claim);
        for (const delivery of claimed) {
          const key = `${delivery.webhook.webhookId} ${delivery.position}`;
          const made = attempted.get(delivery.webhook.webhookId)!;
          if (made.has(delivery.position)) problems.push(`${key} claimed twice`);
          // Every earlier event of the endpoint was claimed before, or comes earlier in this answer.
          for (let p = 1; p < delivery.position; p++) if (!made.has(p)) problems.push(`${key} claimed before ${p} was attempted`);
          made.add(delivery.position);
        }
        if (claimed.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
        made = claimed.map((delivery) => ({
          accountId: "acct", webhookId: delivery.webhook.webhookId, position: delivery.position, owner, at: Date.now(), durationMs: 1,
          statusCode: 204, error: null, status: "succeeded" as const, nextAttemptAt: null,
        }));
        if (combined) continue;
        const recorded = await store.recordDeliveryAttempts!(made);
        if (recorded.includes(false)) problems.push(`${owner} lost a lease it held`);
      }
    });
    await Promise.all([writers, ...claimers]);
    assert.equal(problems.slice(0, 5), []);
    for (const positions of attempted.values()) assert.equal([...positions].sort((x, y) => x - y), Array.from({ length: EVENTS }, (_, i) => i + 1));
  } finally {
    await Promise.all([a!.close(), b!.close()]);
    await database.drop();
  }
});

for (const combined of [false, true]) shared(`a claim re-leasing deliveries whose lease ran out while their attempts are recorded${combined ? " with the recorder's next claim" : ""}: both finish, neither fails`, async () => {
  const database = await (await sharedCluster()).createDatabase();
  const store = await createPostgresStore({ url: database.url });
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  try {
    await store.insertWebhook("acct", {
      webhookId: "wh_one", url: "https://receiver.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
      disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
    });
    await store.importSubmissions("acct", Array.from({ length: 50 }, (_, i) => submission(i)));
    const now = Date.now();
    const claimed = await store.claimDeliveries({ now, limit: 50, leaseMs: 10, owner: "late" });
    assert.is(claimed.length, 50);
    // A table the size a running deployment has, with its statistics taken (as autovacuum
    // would): PostgreSQL's plans then meet the rows in the order each statement lists them.
    await store.insertWebhook("acct", {
      webhookId: "wh_old", url: "https://receiver.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
      disabledAt: new Date().toISOString(), secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
    });
    await sql`INSERT INTO webhook_deliveries (account_id, webhook_id, position, event_id, event_type, status, attempts)
      SELECT 'acct', 'wh_old', n, 'evt_' || n, 'submission.created', 'succeeded', 1 FROM generate_series(1, 20000) AS n`;
    await sql`ANALYZE webhook_deliveries`;
    // The dispatcher's lease has run out when it records its attempts, newest first, while
    // another claims the same deliveries. A transaction holding the middle one lines the two up:
    // the recording has locked the deliveries before it and waits; the claim skips what is held.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const middleLocked = new Promise<void>((resolve) => (locked = resolve));
    const blocker = sql.begin(async (tx) => {
      await tx`SELECT 1 FROM webhook_deliveries WHERE account_id = 'acct' AND webhook_id = 'wh_one' AND position = 25 FOR UPDATE`;
      locked();
      await held;
    });
    await middleLocked;
    const later = now + 100;
    const late = claimed.toReversed().map((d) => ({
      accountId: "acct", webhookId: "wh_one", position: d.position, owner: "late", at: later, durationMs: 1, statusCode: 500, error: null,
      status: "pending" as const, nextAttemptAt: later,
    }));
    const outcomes = Promise.allSettled([
      combined
        ? store.recordAndClaimDeliveries!(late, { now: later, limit: 50, leaseMs: 60_000, owner: "late" })
        : store.recordDeliveryAttempts!(late),
      store.claimDeliveries({ now: later, limit: 50, leaseMs: 60_000, owner: "next" }),
    ]);
    for (let waiting = 0, deadline = Date.now() + 10_000; waiting < 1; ) {
      if (Date.now() > deadline) throw new Error("the recording never waited for the held delivery");
      await new Promise((resolve) => setTimeout(resolve, 10));
      [{ waiting }] = await sql`SELECT COUNT(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    }
    release();
    await blocker;
    const [recorded, reclaimed] = await outcomes;
    assert.equal([recorded.status, reclaimed.status], ["fulfilled", "fulfilled"], String((recorded as PromiseRejectedResult).reason ?? (reclaimed as PromiseRejectedResult).reason));
  } finally {
    await Promise.all([store.close(), sql.end({ timeout: 1 })]);
    await database.drop();
  }
});

shared("two dispatchers late with their outcomes, each recording and then claiming in one transaction what the other's lease left: both finish, and an endpoint's first attempts still go in order", async () => {
  const database = await (await sharedCluster()).createDatabase();
  const store = await createPostgresStore({ url: database.url });
  const sql = postgres(database.url, { max: 3, onnotice: () => {} });
  const [one, two] = [await sql.reserve(), await sql.reserve()];
  try {
    for (const webhookId of ["wh_x", "wh_y"]) {
      await store.insertWebhook("acct", {
        webhookId, url: "https://receiver.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
        disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
      });
    }
    await store.importSubmissions("acct", [submission(0)]);
    const now = Date.now();
    assert.is((await store.claimDeliveries({ now, limit: 10, leaseMs: 20_000, owner: "one" })).length, 2);
    // Endpoint x's first delivery is two's, y's is one's; both leases have run out when they record.
    await sql`UPDATE webhook_deliveries SET lease_owner = 'two' WHERE webhook_id = 'wh_x'`;
    const later = now + 30_000;
    const outcome = (webhookId: string, owner: string) => JSON.stringify([{ account_id: "acct", webhook_id: webhookId, position: 1, owner, at: later,
      duration_ms: 1, status_code: 204, error: null, status: "succeeded", next_attempt_at: null }]);
    const claim = (tx: postgres.ReservedSql, owner: string) =>
      tx`SELECT position, webhook_id FROM formsink_claim_deliveries(${later}, 10, ${later + 60_000}, ${owner}, '10s')`;
    // As migration 8's call runs them: the outcomes, then the claim, in one transaction; here the two interleaved.
    await one`BEGIN`;
    await two`BEGIN`;
    assert.equal([...await one`SELECT * FROM formsink_record_deliveries(${outcome("wh_y", "one")})`].length, 1);
    assert.equal([...await two`SELECT * FROM formsink_record_deliveries(${outcome("wh_x", "two")})`].length, 1);
    // One's claim finds x's delivery due and unleased (two's recording is not committed) and two's finds y's.
    const claims = Promise.allSettled([claim(one, "one"), claim(two, "two")]);
    const [first, second] = await claims;
    assert.equal([first.status, second.status], ["fulfilled", "fulfilled"], String((first as PromiseRejectedResult).reason ?? (second as PromiseRejectedResult).reason));
    assert.equal([(first as PromiseFulfilledResult<unknown[]>).value.length, (second as PromiseFulfilledResult<unknown[]>).value.length], [0, 0]);
    await one`COMMIT`;
    await two`COMMIT`;
    const statuses = await sql`SELECT webhook_id, status FROM webhook_deliveries ORDER BY webhook_id`;
    assert.equal(statuses.map((row) => [row.webhook_id, row.status]), [["wh_x", "succeeded"], ["wh_y", "succeeded"]]);

    // A recording holding an endpoint's oldest first attempt, then given up: the claim beside it
    // takes none of that endpoint's first attempts, and the next claim takes them all, in order.
    await store.importSubmissions("acct", [submission(1), submission(2)]);
    const leased = await store.claimDeliveries({ now: later, limit: 10, leaseMs: 1_000, owner: "one" });
    assert.equal(leased.map((d) => [d.webhook.webhookId, d.position]), [["wh_x", 2], ["wh_y", 2], ["wh_x", 3], ["wh_y", 3]]);
    const latest = later + 5_000;
    await one`BEGIN`;
    await one`SELECT * FROM formsink_record_deliveries(${JSON.stringify([{ account_id: "acct", webhook_id: "wh_x", position: 2, owner: "one",
      at: latest, duration_ms: 1, status_code: 204, error: null, status: "succeeded", next_attempt_at: null }])})`;
    const beside = await store.claimDeliveries({ now: latest, limit: 10, leaseMs: 60_000, owner: "next" });
    assert.equal(beside.map((d) => [d.webhook.webhookId, d.position]), [["wh_y", 2], ["wh_y", 3]]);
    await one`ROLLBACK`;
    const after = await store.claimDeliveries({ now: latest, limit: 10, leaseMs: 60_000, owner: "next" });
    assert.equal(after.map((d) => [d.webhook.webhookId, d.position]), [["wh_x", 2], ["wh_x", 3]]);
  } finally {
    one.release();
    two.release();
    await Promise.all([store.close(), sql.end({ timeout: 1 })]);
    await database.drop();
  }
});

shared.run();

const upgrade = suite("PostgreSQL: upgrading a database that holds data");

upgrade("a database of schema version 1 with submissions, keys and events: after the upgrade all of it reads and writes, totals exact, the feed continuous", async () => {
  const database = await (await sharedCluster()).createDatabase();
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  try {
    // What formsink of schema version 1 wrote: its write functions are in the database it made.
    assert.equal(await migratePostgres(sql, 1), { from: 0, to: 1 });
    const old = postgresStore(sql, { timeoutMs: 10_000, identifyingFields: ["email"], close: async () => {} });
    const kept = await createApiKey(old, { account: "shop" });
    const revoked = await createApiKey(old, { account: "shop", kind: "publishable", domains: ["example.com"] });
    await revokeApiKey(old, revoked.prefix);
    const account = kept.record.accountId;
    const rows = Array.from({ length: 30 }, (_, i) => submission(i));
    for (const row of rows.slice(0, 10)) await old.insertSubmission(account, row);
    assert.is(await old.importSubmissions(account, rows.slice(10, 29)), 19);
    const once = { key: "retry-1", fingerprint: "f1", expiresAt: Date.now() + 3_600_000 };
    assert.equal(await old.insertSubmissionOnce(account, rows[29]!, once, Date.now()), { inserted: true });
    for (const row of rows.slice(0, 6)) await old.setSubmissionStatus(account, row.submissionId, "completed");
    await old.deleteSubmission(account, rows[6]!.submissionId);
    const before = await old.readEvents(account, { limit: 1000 });
    if (before.expired) throw new Error("expired");
    assert.is(before.events.length, 30 + 6 + 1);

    const { store, upgrade } = await openPostgresStore({ url: database.url });
    try {
      assert.equal(upgrade, { from: 1, to: POSTGRES_SCHEMA_VERSION });
      const living = rows.filter((_, i) => i !== 6).map((row, i) => (i < 6 ? { ...row, status: "completed" as const } : row));
      for (const row of living) assert.equal(await store.getSubmission(account, row.submissionId), row);
      assert.is(await store.getSubmission(account, rows[6]!.submissionId), undefined);
      const all = await store.listSubmissions(account, { order: "asc", limit: 100, offset: 0 });
      assert.equal(all.items, living);
      assert.is(all.total, 29);
      assert.is((await store.listSubmissions(account, { status: "completed", order: "asc", limit: 1, offset: 0 })).total, 6);
      assert.is((await store.listSubmissions(account, { popupId: "popup-1", status: "pending", order: "asc", limit: 1, offset: 0 })).total, 8);
      assert.equal(await store.findSubmissionsByIdentifier(account, "email", "USER12@example.com"), [rows[12]!.submissionId]);
      assert.is((await store.findApiKey(kept.record.id))?.revokedAt, null);
      assert.type((await store.findApiKey(revoked.record.id))?.revokedAt, "string");
      const retried = await store.insertSubmissionOnce(account, submission(99), once, Date.now());
      assert.equal(retried, { inserted: false, fingerprint: "f1", submission: rows[29] });

      // New writes continue the feed where version 1 left it: a reader of the old cursor gets exactly them.
      const added = submission(30);
      await store.insertSubmission(account, added);
      await store.setSubmissionStatus(account, rows[7]!.submissionId, "completed");
      await store.deleteSubmission(account, rows[8]!.submissionId);
      const after = await store.readEvents(account, { after: before.cursor, limit: 1000 });
      if (after.expired) throw new Error("expired");
      assert.equal(after.events.map((event) => [event.type, event.data.submissionId]), [
        ["submission.created", added.submissionId],
        ["submission.status_changed", rows[7]!.submissionId],
        ["submission.deleted", rows[8]!.submissionId],
      ]);
      assert.is(after.cursor, before.cursor + 3);
      const whole = await store.readEvents(account, { limit: 1000 });
      if (whole.expired) throw new Error("expired");
      assert.equal(whole.events.map((event) => event.id), [...before.events, ...after.events].map((event) => event.id));
      const [counted] = await sql`SELECT COUNT(*)::int AS n FROM submissions WHERE account_id = ${account}`;
      assert.is((await store.listSubmissions(account, { order: "asc", limit: 1, offset: 0 })).total, counted!.n);
      assert.is(counted!.n, 29);
    } finally {
      await store.close();
    }
  } finally {
    await sql.end({ timeout: 1 });
    await database.drop();
  }
});

upgrade.run();

const imports = suite("PostgreSQL: what a write reads, how a lookup is planned");

imports("an import reads the account's index once per row it brings, not once per row the account has, with the plan a session caches", async () => {
  const database = await (await sharedCluster()).createDatabase();
  // One connection, whose cached plans are generic from the first call: what a long import's session runs after a few batches.
  const sql = postgres(database.url, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: "force_generic_plan" } });
  try {
    await migratePostgres(sql);
    const store = postgresStore(sql, { timeoutMs: 10_000, identifyingFields: ["email"], close: async () => {} });
    const rows = Array.from({ length: 3000 }, (_, i) => submission(i));
    assert.is(await store.importSubmissions("big", rows.slice(0, 2980)), 2980);
    const readSoFar = () => rowsRead(sql, "submissions");
    const before = await readSoFar();
    // Ten already there (skipped), twenty new.
    assert.is(await store.importSubmissions("big", rows.slice(2970)), 20);
    const read = (await readSoFar()) - before;
    assert.ok(read <= 30, `the import of 30 rows read ${read} rows of the account's 2,980`);
    assert.is((await store.listSubmissions("big", { order: "asc", limit: 1, offset: 0 })).total, 3000);
  } finally {
    await sql.end({ timeout: 1 });
    await database.drop();
  }
});

imports("a dispatcher's outcomes and next claim read the deliveries they change, not every delivery an endpoint has had, with the plan a session caches", async () => {
  const database = await (await sharedCluster()).createDatabase();
  const sql = postgres(database.url, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: "force_generic_plan" } });
  try {
    await migratePostgres(sql);
    // No statistics of the deliveries, as in a new database until autovacuum first analyzes the table.
    await sql`ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)`;
    const store = postgresStore(sql, { timeoutMs: 10_000, identifyingFields: ["email"], close: async () => {} });
    for (const webhookId of ["wh_a", "wh_b"]) {
      await store.insertWebhook("acct", {
        webhookId, url: "https://r.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
        disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
      });
    }
    const succeeded = (claimed: readonly ClaimedDelivery[]): DeliveryAttempt[] => claimed.map((d) => ({
      accountId: d.accountId, webhookId: d.webhook.webhookId, position: d.position, owner: "o", at: Date.now(), durationMs: 1,
      statusCode: 204, error: null, status: "succeeded", nextAttemptAt: null,
    }));
    let made: DeliveryAttempt[] = [];
    let created = 0;
    // A cycle: creates, then the previous cycle's outcomes and the claim of their deliveries, as the dispatcher writes them.
    const cycle = async (creates: number) => {
      await store.importSubmissions("acct", Array.from({ length: creates }, () => submission(created++)));
      const { recorded, claimed } = await store.recordAndClaimDeliveries!(made, { now: Date.now(), limit: 500, leaseMs: 60_000, owner: "o" });
      assert.ok(recorded.every(Boolean), "every outcome recorded");
      assert.is(claimed.length, 2 * creates);
      made = succeeded(claimed);
    };
    const readSoFar = () => rowsRead(sql, "webhook_deliveries");
    const readByCycle = async () => {
      const before = await readSoFar();
      await cycle(8);
      return (await readSoFar()) - before;
    };
    // A few cycles of the same size before each measure, so that what a big cycle left behind is cleared.
    for (let i = 0; i < 3; i++) await cycle(8);
    const early = await readByCycle();
    for (let i = 0; i < 15; i++) await cycle(100);
    for (let i = 0; i < 3; i++) await cycle(8);
    const late = await readByCycle();
    const [history] = await sql`SELECT COUNT(*)::int AS n FROM webhook_deliveries`;
    assert.ok(history!.n > 3000);
    // 16 outcomes recorded and 16 deliveries claimed: each a few probes by key, whatever the history.
    assert.ok(late <= 400, `a cycle of 16 outcomes and 16 claims read ${late} deliveries of ${history!.n} (the same cycle early: ${early})`);
    assert.ok(late <= 2 * early + 50, `a cycle read ${late} deliveries after ${history!.n}, ${early} when there were 48`);
    // A later migration that replaces one of these functions must set them again (CREATE OR REPLACE drops what it does not name).
    const settings = await sql`SELECT proname, proconfig FROM pg_proc
      WHERE proname IN ('formsink_claim_deliveries', 'formsink_record_and_claim_deliveries', 'formsink_record_deliveries') ORDER BY proname`;
    assert.equal(settings.map((row) => [row.proname, row.proconfig]), ["formsink_claim_deliveries", "formsink_record_and_claim_deliveries", "formsink_record_deliveries"]
      .map((name) => [name, ["enable_hashjoin=off", "enable_mergejoin=off"]]));
  } finally {
    await sql.end({ timeout: 1 });
    await database.drop();
  }
});

imports("a key lookup is planned once per connection, not once per request", async () => {
  const database = await (await sharedCluster()).createDatabase();
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    await migratePostgres(sql);
    const store = postgresStore(sql, { timeoutMs: 10_000, identifyingFields: ["email"], close: async () => {} });
    const { record } = await createApiKey(store, { account: "shop" });
    for (let i = 0; i < 20; i++) assert.is((await store.findApiKey(i % 2 === 0 ? record.id : `missing-${i}`))?.id, i % 2 === 0 ? record.id : undefined);
    const [lookup] = await sql`SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement LIKE '%FROM api_keys WHERE id = ANY%' AND statement NOT LIKE '%pg_prepared_statements%'`;
    // PostgreSQL plans a prepared statement for its values the first five times, then once for all values if that plan costs no more.
    assert.ok(lookup!.custom_plans <= 5 && lookup!.generic_plans >= 15, `planned ${lookup!.custom_plans} times for 20 lookups`);
  } finally {
    await sql.end({ timeout: 1 });
    await database.drop();
  }
});

imports("data keys: a store leaves out of a create the keys it saw committed, and only those; every key is listed, whichever server wrote it", async () => {
  const database = await (await sharedCluster()).createDatabase();
  const [a, b] = await Promise.all([openPostgresStore({ url: database.url }), openPostgresStore({ url: database.url })]).then((all) => all.map((o) => o.store));
  try {
    const withData = (i: number, data: Record<string, string>): Submission => ({ ...submission(i), popupId: "keys", data });
    const taken = withData(0, { email: "a@example.com", first: "1" });
    await a!.insertSubmission("acct", taken);
    await b!.insertSubmission("acct", withData(1, { email: "b@example.com", second: "2" }));
    // A create that fails (its id is taken) commits nothing: its new key is not known to be stored.
    const failed = await a!.insertSubmission("acct", { ...withData(2, { failed: "x" }), submissionId: taken.submissionId }).then(() => false, () => true);
    assert.ok(failed, "a create with a taken id fails");
    assert.equal(await a!.listDataKeys("acct", { popupId: "keys" }, 100), ["email", "first", "second"]);
    await a!.insertSubmission("acct", withData(3, { email: "c@example.com", first: "3", failed: "y", third: "z" }));
    await b!.insertSubmissionOnce("acct", withData(4, { fourth: "4" }), { key: "k", fingerprint: "f", expiresAt: Date.now() + 60_000 }, Date.now());
    for (const store of [a!, b!]) assert.equal(await store.listDataKeys("acct", { popupId: "keys" }, 100), ["email", "failed", "first", "fourth", "second", "third"]);
  } finally {
    await Promise.all([a!.close(), b!.close()]);
    await database.drop();
  }
});

imports.run();

const harness = suite("PostgreSQL test harness");

harness("without PostgreSQL's binaries it fails at once, naming the package to install", async () => {
  const saved = process.env.POSTGRES_BIN;
  process.env.POSTGRES_BIN = "/nonexistent/postgresql/bin";
  try {
    let error: unknown;
    await startPostgresCluster().catch((e: unknown) => (error = e));
    assert.instance(error, Error);
    assert.match(String(error), /apt-get install postgresql/);
  } finally {
    if (saved === undefined) delete process.env.POSTGRES_BIN;
    else process.env.POSTGRES_BIN = saved;
  }
});

harness("a database handed back is emptied to what a new migrated one holds: the migrations' rows, none of its user's, sequences restarted", async () => {
  const cluster = await sharedCluster();
  const used = await cluster.migratedDatabase();
  const store = await createPostgresStore({ url: used.url, identifyingFields: ["phone"] });
  await store.insertSubmission("acct", submission(1));
  await createApiKey(store, { account: "acct", kind: "secret" });
  await store.insertWebhook("acct", {
    webhookId: "wh_one", url: "https://receiver.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
    disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
  });
  await store.close();
  await used.release();
  const again = await cluster.migratedDatabase();
  const fresh = await cluster.createDatabase();
  const [reused, migrated] = [postgres(again.url, { max: 1, onnotice: () => {} }), postgres(fresh.url, { max: 1, onnotice: () => {} })];
  try {
    assert.is(again.name, used.name, "the database was reused");
    await migratePostgres(migrated);
    assert.equal(await contents(reused), await contents(migrated));
    assert.equal([...(await reused`SELECT field FROM identifying_fields`)], [{ field: "email" }], "the migrations' own rows are back");
  } finally {
    await Promise.all([reused.end({ timeout: 1 }), migrated.end({ timeout: 1 })]);
    await again.release();
    await fresh.drop();
  }
});

harness("a database handed back while a session still holds a transaction on it is dropped, not reused", async () => {
  const cluster = await sharedCluster();
  const used = await cluster.migratedDatabase();
  const sql = postgres(used.url, { max: 1, onnotice: () => {} });
  const reserved = await sql.reserve();
  try {
    await reserved`BEGIN`;
    await reserved`INSERT INTO formsink_settings (name, value) VALUES ('left', 'behind')`;
    await used.release();
    const admin = postgres(cluster.url(), { max: 1, onnotice: () => {} });
    try {
      assert.equal([...(await admin`SELECT datname FROM pg_database WHERE datname = ${used.name}`)], []);
    } finally {
      await admin.end({ timeout: 1 });
    }
  } finally {
    reserved.release();
    await sql.end({ timeout: 1 }).catch(() => {});
  }
});

harness.run();

stopClusterAfterSuites();

/** Every row of every table but the migrations' log, and every sequence's state, as one text. */
async function contents(sql: postgres.Sql): Promise<string> {
  const tables = (await sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'formsink_migrations' ORDER BY tablename`).map((row) => String(row.tablename));
  const rows = [];
  for (const table of tables) rows.push([table, (await sql.unsafe(`SELECT json_agg(t ORDER BY t::text)::text AS rows FROM "${table}" t`))[0]!.rows]);
  const sequences = await sql`SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename`;
  return JSON.stringify({ rows, sequences: [...sequences] });
}

/** Index entries and table rows of `table` read so far, as the server has counted them. */
async function rowsRead(sql: postgres.Sql, table: string): Promise<number> {
  await sql`SELECT pg_stat_force_next_flush()`;
  const [row] = await sql`SELECT pg_stat_clear_snapshot(),
    (SELECT COALESCE(SUM(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = ${table})::int
      + (SELECT COALESCE(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = ${table})::int AS n`;
  return row!.n as number;
}

function submission(i: number): Submission {
  return {
    submissionId: crypto.randomUUID(),
    popupId: `popup-${i % 3}`,
    data: { email: `user${i}@example.com` },
    domain: "example.com",
    userAgent: "agent",
    device: "desktop",
    status: "pending",
    createdAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
  };
}
