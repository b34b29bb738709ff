/**
 * The SQL store reads a page of the change log, and a walk's page (cursor lists, exports), as
 * one value joined by SQLite (src/stores/sql/events.ts, store.ts). D1 refuses a value longer
 * than 2 MB: such a page is read again in halves (src/stores/sql/read-in-halves.ts), and the
 * reader gets the same page.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import type { SqlDriver } from "../../src/stores/sql/driver.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import { openExport } from "../../src/export/export.ts";
import { eventTexts, type SubmissionWalk } from "../../src/store.ts";
import type { Submission } from "../../src/submission.ts";

const test = suite("SQL store: pages too long for one value");

const ACCOUNT = "acct_pages";
const TEXT_LIMIT = 4000;

/**
 * A store over :memory: whose database, while `limited`, refuses values longer than TEXT_LIMIT,
 * as D1 does past 2 MB; `afterRead`, when set, runs after each read it answers.
 */
async function limitedStore() {
  const connection = openLibsqlFile(":memory:");
  const state: { limited: boolean; refused: number; afterRead?: () => Promise<void> } = { limited: false, refused: 0 };
  const driver: SqlDriver = {
    execute: async (statement) => {
      const result = await connection.driver.execute(statement);
      const length = (value: unknown) => (typeof value === "string" ? value.length : value instanceof ArrayBuffer || ArrayBuffer.isView(value) ? value.byteLength : 0);
      const tooLong = (result.rows as unknown as unknown[][]).some((row) => Object.values(row).some((value) => length(value) > TEXT_LIMIT));
      if (state.limited && tooLong) {
        state.refused++;
        throw new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG");
      }
      await state.afterRead?.();
      return result;
    },
    batch: (statements, mode) => connection.driver.batch(statements, mode),
  };
  return { store: await createSqlStore(driver, connection.close), state };
}

/**
 * What `read` gives with the database unlimited, after checking that it gives the same once
 * the database refuses long values, and that some were refused.
 */
async function readRefusedAlike<T>(state: { limited: boolean; refused: number }, read: () => Promise<T>): Promise<T> {
  const whole = await read();
  assert.is(state.refused, 0);
  state.limited = true;
  const refused = await read();
  assert.ok(state.refused > 0, "the long pages were refused as one value");
  assert.equal(refused, whole);
  return whole;
}

const submission = (i: number): Submission => ({
  submissionId: crypto.randomUUID(),
  popupId: `popup_${i % 2}`,
  data: { message: `message ${i} `.repeat(20) },
  domain: "example.com",
  userAgent: "Mozilla/5.0",
  device: "desktop",
  status: "pending",
  createdAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
});

test("a page of events too long for one text is read in halves: the same events, in the same order, with the same cursor", async () => {
  const { store, state } = await limitedStore();
  try {
    const rows = Array.from({ length: 30 }, (_, i) => submission(i));
    await store.importSubmissions(ACCOUNT, rows);
    await store.setSubmissionStatus(ACCOUNT, rows[3]!.submissionId, "completed");
    await store.deleteSubmission(ACCOUNT, rows[4]!.submissionId);
    const read = async () => {
      const pages = [];
      let after: number | undefined;
      for (;;) {
        const page = await store.readEventsAsJson!(ACCOUNT, { after, limit: 25 });
        assert.ok(!page.expired);
        pages.push({ texts: eventTexts(page), count: page.count, cursor: page.cursor });
        if (page.count < 25) return pages;
        after = page.cursor;
      }
    };
    const whole = await readRefusedAlike(state, read);
    assert.is(whole.flatMap((page) => page.texts).length, 32);
    assert.equal(
      whole.flatMap((page) => page.texts.map((text) => (JSON.parse(text) as { data: { submissionId: string } }).data.submissionId)).slice(0, 30),
      rows.map((row) => row.submissionId),
      "created events in commit order",
    );
    const parsed = await store.readEvents(ACCOUNT, { limit: 100 });
    assert.ok(!parsed.expired);
    assert.equal(parsed.events.map((event) => JSON.stringify(event)), whole.flatMap((page) => page.texts));
  } finally {
    await store.close();
  }
});

test("events pruned between the halves of a long page end the page before them, and the next read says the log expired", async () => {
  const { store, state } = await limitedStore();
  try {
    const rows = Array.from({ length: 30 }, (_, i) => submission(i));
    await store.importSubmissions(ACCOUNT, rows);
    state.limited = true;
    // Once the first half is read, every event is pruned: the second half finds them gone.
    let pruned = false;
    state.afterRead = async () => {
      if (state.refused === 0 || pruned) return;
      pruned = true;
      await store.pruneEvents(Date.now() + 1000);
    };
    const page = await store.readEventsAsJson!(ACCOUNT, { limit: 25 });
    assert.ok(pruned && !page.expired);
    const texts = eventTexts(page);
    assert.ok(texts.length > 0 && texts.length < 25, `${texts.length} events`);
    assert.is(page.count, texts.length);
    assert.equal(
      texts.map((text) => (JSON.parse(text) as { data: { submissionId: string } }).data.submissionId),
      rows.slice(0, texts.length).map((row) => row.submissionId),
      "the first events, in commit order",
    );
    assert.equal(await store.readEventsAsJson!(ACCOUNT, { after: page.cursor, limit: 25 }), { expired: true });
  } finally {
    await store.close();
  }
});

test("a walk's page too long for one value is read in halves: the same rows, the same NDJSON, the same export", async () => {
  const { store, state } = await limitedStore();
  try {
    const rows = Array.from({ length: 60 }, (_, i) => submission(i));
    await store.importSubmissions(ACCOUNT, rows);
    const read = async () => {
      const walks: unknown[] = [];
      for (const order of ["asc", "desc"] as const) {
        let walk: SubmissionWalk = { order, limit: 25 };
        for (;;) {
          const page = await store.walkSubmissions(ACCOUNT, walk);
          const ndjson = new TextDecoder().decode((await store.walkSubmissionsAsNdjson!(ACCOUNT, walk)).bytes);
          walks.push(page, ndjson);
          if (page.length < 25) break;
          const last = page.at(-1)!;
          walk = { ...walk, after: { createdAt: Date.parse(last.createdAt), submissionId: last.submissionId } };
        }
      }
      for (const format of ["ndjson", "csv"] as const) {
        walks.push(await new Response(await openExport(store, ACCOUNT, { format, filter: {}, order: "asc", pageSize: 1000 })).text());
      }
      return walks;
    };
    const whole = await readRefusedAlike(state, read);
    assert.equal((whole[0] as Submission[]).map((row) => row.submissionId), rows.slice(0, 25).map((row) => row.submissionId));
    assert.is((whole.at(-2) as string).split("\n").length, 61, "the NDJSON export holds every row");
  } finally {
    await store.close();
  }
});

test("a created event whose submission's rowid changed (VACUUM may renumber them) or that has none still shows its own submission", async () => {
  const connection = openLibsqlFile(":memory:");
  const store = await createSqlStore(connection.driver, connection.close);
  try {
    const rows = Array.from({ length: 4 }, (_, i) => submission(i));
    await store.importSubmissions(ACCOUNT, rows.slice(0, 2));
    for (const row of rows.slice(2)) await store.insertSubmission(ACCOUNT, row);
    const read = async () => {
      const page = await store.readEventsAsJson!(ACCOUNT, { limit: 100 });
      assert.ok(!page.expired);
      return eventTexts(page).map((text) => (JSON.parse(text) as { data: Submission }).data);
    };
    assert.equal(await read(), rows);
    // Each event's rowid now names another event's submission, or none.
    await connection.driver.execute({ sql: "UPDATE events SET submission_rowid = CASE WHEN position % 2 = 0 THEN submission_rowid + 1 ELSE NULL END" });
    assert.equal(await read(), rows);
    await store.deleteSubmission(ACCOUNT, rows[1]!.submissionId);
    const [, deleted] = await read();
    assert.equal(deleted, { submissionId: rows[1]!.submissionId, popupId: rows[1]!.popupId });
  } finally {
    await store.close();
  }
});
test.run();
