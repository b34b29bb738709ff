/**
 * The change log (`EventLog` in src/store.ts) as tests, for a store that is both a
 * `SubmissionStore` and an `EventLog`: every change has exactly one event, and a reader that
 * follows the cursor sees each event exactly once, in commit order, with concurrent writers.
 */
import type { ChangeEvent, EventType } from "../events.ts";
import type { EventLog, SubmissionStore } from "../store.ts";
import type { Submission } from "../submission.ts";
import { assert } from "./assert.ts";
import { followLog, readAll } from "./event-reading.ts";
import { ACCOUNT, OTHER_ACCOUNT, seedRows, T0 } from "./fixtures.ts";
import { storeTests, type StoreSuiteOptions } from "./suite.ts";

type Store = SubmissionStore & EventLog;

const kinds = (events: readonly ChangeEvent[]) => events.map((e) => `${e.type} ${e.data.submissionId}`);

/** Registers the tests of `EventLog` with your runner's `test`. */
export function testEventLog<S extends Store>(options: StoreSuiteOptions<S>): void {
  const test = storeTests(options);

  test("events: a deletion of many at once (erasure, retention) leaves one tombstone per deleted submission, with its reason", async (store) => {
    if (!store.deleteSubmissions) return;
    const rows = seedRows(4);
    await store.importSubmissions(ACCOUNT, rows);
    const [first, second, kept, third] = rows as [Submission, Submission, Submission, Submission];
    const deleted = await store.deleteSubmissions(ACCOUNT, [first.submissionId, crypto.randomUUID(), second.submissionId], "erasure");
    assert.equal([...deleted].sort(), [first.submissionId, second.submissionId].sort());
    assert.equal(await store.deleteSubmissions(ACCOUNT, [third.submissionId], "retention"), [third.submissionId]);
    const tombstones = (await readAll(store, ACCOUNT)).events.filter((e) => e.type === "submission.deleted").map((e) => e.data);
    assert.equal(
      [...tombstones].sort((x, y) => (x.submissionId < y.submissionId ? -1 : 1)),
      [
        { submissionId: first.submissionId, popupId: first.popupId, reason: "erasure" },
        { submissionId: second.submissionId, popupId: second.popupId, reason: "erasure" },
        { submissionId: third.submissionId, popupId: third.popupId, reason: "retention" },
      ].sort((x, y) => (x.submissionId < y.submissionId ? -1 : 1)),
    );
    assert.ok(!tombstones.some((t) => t.submissionId === kept.submissionId), "a submission not deleted has no tombstone");
  });

  test("events: every create, status change and delete appends exactly one event, in order", async (store) => {
    const [a, b, c] = seedRows(3) as [Submission, Submission, Submission];
    const otherStatus = a.status === "pending" ? "completed" : "pending";
    await store.insertSubmission(ACCOUNT, a);
    await store.importSubmissions(ACCOUNT, [b, a, { ...b, popupId: "ignored" }]);
    await store.insertSubmissionOnce(ACCOUNT, c, { key: "k1", fingerprint: "f", expiresAt: T0 + 1e12 }, T0);
    await store.insertSubmissionOnce(ACCOUNT, { ...c, submissionId: crypto.randomUUID() }, { key: "k1", fingerprint: "f", expiresAt: T0 + 1e12 }, T0);
    assert.is(await store.setSubmissionStatus(ACCOUNT, a.submissionId, otherStatus), true);
    assert.is(await store.setSubmissionStatus(ACCOUNT, a.submissionId, otherStatus), true, "setting the current status is a success");
    assert.is(await store.setSubmissionStatus(ACCOUNT, crypto.randomUUID(), otherStatus), false);
    assert.is(await store.deleteSubmission(ACCOUNT, b.submissionId), true);
    assert.is(await store.deleteSubmission(ACCOUNT, b.submissionId), false);
    assert.is(await store.deleteSubmission(ACCOUNT, c.submissionId, "erasure"), true);

    const { events } = await readAll(store, ACCOUNT);
    assert.equal(kinds(events), [
      `submission.created ${a.submissionId}`,
      `submission.created ${b.submissionId}`,
      `submission.created ${c.submissionId}`,
      `submission.status_changed ${a.submissionId}`,
      `submission.deleted ${b.submissionId}`,
      `submission.deleted ${c.submissionId}`,
    ]);
    assert.equal(events[0]!.data, a, "a created event carries the whole submission");
    assert.equal(events[3]!.data, { submissionId: a.submissionId, popupId: a.popupId, status: otherStatus, previousStatus: a.status });
    assert.equal(events[4]!.data, { submissionId: b.submissionId, popupId: b.popupId, reason: "api" });
    assert.equal(events[5]!.data, { submissionId: c.submissionId, popupId: c.popupId, reason: "erasure" });
    assert.equal(events[1]!.data, { submissionId: b.submissionId, popupId: b.popupId }, "once deleted, the created event carries no personal data");
    assert.is(new Set(events.map((e) => e.id)).size, events.length, "event ids are unique");
    for (const event of events) {
      assert.ok(/^evt_[0-9A-Za-z_-]+$/.test(event.id), `event id ${event.id}`);
      assert.ok(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(event.timestamp), `timestamp ${event.timestamp}`);
    }
    assert.equal((await readAll(store, OTHER_ACCOUNT)).events, [], "accounts are isolated");
  });

  test("events: a write that fails appends nothing", async (store) => {
    const [a] = seedRows(1) as [Submission];
    await store.insertSubmission(ACCOUNT, a);
    let failed = false;
    await store.insertSubmission(ACCOUNT, { ...a, popupId: "other" }).catch(() => (failed = true));
    assert.ok(failed, "a second insert with the id fails");
    assert.equal(kinds((await readAll(store, ACCOUNT)).events), [`submission.created ${a.submissionId}`]);
  });

  test("events: filters by type and popup; a filtered reader's cursor moves past what it skips", async (store) => {
    const rows = seedRows(9);
    for (const row of rows) await store.insertSubmission(ACCOUNT, row);
    for (const row of rows.slice(0, 4)) await store.deleteSubmission(ACCOUNT, row.submissionId);
    const all = (await readAll(store, ACCOUNT)).events;
    const deletes = await readAll(store, ACCOUNT, { types: ["submission.deleted"] }, 2);
    assert.equal(deletes.events, all.filter((e) => e.type === "submission.deleted"));
    const popup = rows[0]!.popupId;
    const ofPopup = await readAll(store, ACCOUNT, { popupId: popup, types: ["submission.created", "submission.deleted"] satisfies EventType[] }, 3);
    assert.equal(ofPopup.events, all.filter((e) => e.data.popupId === popup));
    const end = await readAll(store, ACCOUNT, {}, 100);
    assert.is(deletes.cursor, end.cursor, "every reader at the end of the log holds the same cursor");
    assert.equal(await store.readEvents(ACCOUNT, { limit: 10, after: end.cursor, types: ["submission.created"] }), { expired: false, events: [], cursor: end.cursor });
  });

  test("events: a reader following the cursor during concurrent writes sees every event exactly once, in order", async (store) => {
    const rows = seedRows(60);
    let writing = true;
    const follower = followLog(store, ACCOUNT, 5, () => writing);
    const writes = Promise.all(
      rows.map(async (row, i) => {
        await store.insertSubmission(ACCOUNT, row);
        if (i % 3 === 0) await store.setSubmissionStatus(ACCOUNT, row.submissionId, row.status === "pending" ? "completed" : "pending");
        if (i % 4 === 0) await store.deleteSubmission(ACCOUNT, row.submissionId);
      }),
    ).finally(() => (writing = false));
    // Awaited together: when a write fails, the follower stops too, and its own failure (the
    // store is closed under it) is not left unhandled to crash the runner.
    const [seen] = await Promise.all([follower, writes]);
    const changes = 60 + 20 + 15;
    assert.is(seen.length, changes, "one event per change");
    assert.is(new Set(seen.map((e) => e.id)).size, changes, "each event once");
    const fromScratch = (await readAll(store, ACCOUNT, {}, 1000)).events;
    // An event that became readable behind a cursor already handed out would be in the full
    // log but not in what the follower saw, or not where it saw it.
    assert.equal(seen.map((e) => e.id), fromScratch.map((e) => e.id), "the follower saw the log in its one order");
    for (const row of rows) {
      const order = seen.filter((e) => e.data.submissionId === row.submissionId).map((e) => e.type);
      assert.is(order[0], "submission.created", "a submission's first event is its creation");
      if (order.includes("submission.deleted")) assert.is(order.at(-1), "submission.deleted", "a deletion is the last event");
    }
  });

  test("events: an account's cursors and events are the same whether or not another account writes in between", async (store) => {
    // The same changes in two accounts, one alone and one with the other account writing between
    // each of its steps: every page and cursor of the one is the other's.
    const alone = "acct-conformance-alone";
    const steps = (rows: readonly Submission[]) => [
      (accountId: string) => store.insertSubmission(accountId, rows[0]!),
      (accountId: string) => store.importSubmissions(accountId, [rows[1]!, rows[2]!]),
      (accountId: string) => store.setSubmissionStatus(accountId, rows[1]!.submissionId, rows[1]!.status === "pending" ? "completed" : "pending"),
      (accountId: string) => store.deleteSubmission(accountId, rows[2]!.submissionId),
      (accountId: string) => store.insertSubmissionOnce(accountId, rows[3]!, { key: "k", fingerprint: "f", expiresAt: T0 + 1e12 }, T0),
      async (accountId: string) => void (await store.deleteSubmissions?.(accountId, [rows[0]!.submissionId], "erasure")),
    ];
    const rows = seedRows(4);
    const others = seedRows(6 * 5);
    const observed = async (accountId: string, interleave: (step: number) => Promise<unknown>) => {
      const seen: unknown[] = [];
      const read = async (after?: number) => {
        const page = await store.readEvents(accountId, { limit: 100, after });
        if (page.expired) throw new Error("the log says the cursor expired");
        return page;
      };
      let { cursor } = await read();
      for (const [i, step] of steps(rows).entries()) {
        await interleave(i);
        await step(accountId);
        const next = await read(cursor);
        seen.push({ moved: next.cursor - cursor, events: next.events.map((e) => [e.type, e.data]) });
        cursor = next.cursor;
      }
      return seen;
    };
    const quiet = await observed(alone, async () => {});
    const busy = await observed(ACCOUNT, async (step) => {
      const batch = others.slice(step * 5, step * 5 + 5);
      await store.importSubmissions(OTHER_ACCOUNT, batch.slice(0, 2));
      for (const row of batch.slice(2)) await store.insertSubmission(OTHER_ACCOUNT, row);
      await store.deleteSubmission(OTHER_ACCOUNT, batch[0]!.submissionId);
    });
    assert.equal(busy, quiet);
    assert.equal((quiet[0] as { moved: number }).moved, 1, "one create moves the cursor by one");
    const whole = async (accountId: string) => {
      const { events, cursor } = await readAll(store, accountId, {}, 2);
      return { cursor, events: events.map((e) => [e.type, e.data]) };
    };
    assert.equal(await whole(ACCOUNT), await whole(alone), "read from the start, page by page");
  });

  test("events: pruning drops what is older; a cursor from before the prune has expired", async (store) => {
    const [old1, old2, fresh] = seedRows(3) as [Submission, Submission, Submission];
    await store.insertSubmission(ACCOUNT, old1);
    const early = await store.readEvents(ACCOUNT, { limit: 10 });
    assert.ok(!early.expired);
    await store.insertSubmission(ACCOUNT, old2);
    await store.insertSubmission(OTHER_ACCOUNT, old2);
    const before = Date.now() + 1;
    while (Date.now() <= before) await new Promise((resolve) => setTimeout(resolve, 2));
    await store.insertSubmission(ACCOUNT, fresh);
    const whole = await readAll(store, ACCOUNT);

    assert.is(await store.pruneEvents(before), 3);
    assert.is(await store.pruneEvents(before), 0);
    assert.equal(kinds((await readAll(store, ACCOUNT)).events), [`submission.created ${fresh.submissionId}`], "without a cursor: from the oldest kept");
    assert.equal(await store.readEvents(ACCOUNT, { limit: 10, after: early.expired ? 0 : early.cursor }), { expired: true });
    assert.equal((await readAll(store, ACCOUNT, {}, 7, whole.cursor)).events, [], "a cursor past what was pruned reads on");
    assert.equal((await readAll(store, OTHER_ACCOUNT)).events, []);
  });

  // A cursor past the account's newest position was never handed out by this log: one kept
  // across a restore from an earlier backup, or from another database. Read as caught up, it
  // would skip the events written until the log passes it, and never learn that the ones
  // after the backup were undone; it must start afresh, as after a prune.
  test("events: a cursor ahead of the account's log has expired; the newest cursor reads on", async (store) => {
    const [first, second] = seedRows(2) as [Submission, Submission];
    assert.equal(await store.readEvents(ACCOUNT, { limit: 10, after: 3 }), { expired: true }, "an account without events");
    await store.insertSubmission(ACCOUNT, first);
    await store.insertSubmission(OTHER_ACCOUNT, first);
    await store.insertSubmission(OTHER_ACCOUNT, second);
    const cursor = (await readAll(store, ACCOUNT)).cursor!;
    assert.equal(await store.readEvents(ACCOUNT, { limit: 10, after: cursor + 1 }), { expired: true });
    assert.equal(await store.readEvents(ACCOUNT, { limit: 10, after: cursor + 1, types: ["submission.deleted"] }), { expired: true });
    assert.equal(await store.readEvents(ACCOUNT, { limit: 10, after: cursor }), { expired: false, events: [], cursor });
    await store.insertSubmission(ACCOUNT, second);
    assert.equal(kinds((await readAll(store, ACCOUNT, {}, 10, cursor)).events), [`submission.created ${second.submissionId}`]);
  });
}
