/**
 * A list whose page the merge read lately reads the merge at once, without the walk's statement
 * before it, and one whose walk found its page lately reads the walk without the counts' choice
 * (list-query.ts, `readLately`): the page and the total are the ones the usual way gives,
 * before and after writes that make the counts choose the other way, and such a list is read
 * the usual way again after a few, so that the other way comes back once it pays.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import type { SqlDriver } from "../../src/stores/sql/driver.ts";
import { readLately } from "../../src/stores/sql/list-query.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import type { CompleteStore, SubmissionQuery } from "../../src/store.ts";
import type { Submission } from "../../src/submission.ts";

const test = suite("SQL store: lists read lately one way (the merge, or a walk that found the page)");

const ACCOUNT = "acct_merged";
const T0 = Date.UTC(2025, 3, 1);

let made = 0;
/** A submission `minutes` after T0, of the given device and status, the rest varied. */
function submission(minutes: number, device: Submission["device"], status: Submission["status"]): Submission {
  const i = made++;
  return {
    submissionId: `id-${String(i).padStart(5, "0")}`,
    popupId: `popup_${i % 4}`,
    data: { n: i },
    domain: `site${i % 5}.example`,
    userAgent: "Mozilla/5.0",
    device,
    status,
    createdAt: new Date(T0 + minutes * 60_000).toISOString(),
  };
}

/** A store over :memory: that counts the list statements it reads: walks (with the counts' choice) and merges. */
async function countingStore() {
  const connection = openLibsqlFile(":memory:");
  const reads = { walks: 0, merges: 0, choices: 0 };
  const count = (sql: string) => {
    // a bounded walk hands out the rowids of the rows it walked
    if (sql.includes("walked_rowid")) reads.walks++;
    else if (sql.includes("AS candidate")) reads.merges++;
    // the counts' choice reads the counts of the account (or the popup) as `f`
    if (sql.includes("walk_pays") && sql.includes("submission_counts f")) reads.choices++;
  };
  const driver: SqlDriver = {
    execute: (statement) => {
      count(statement.sql);
      return connection.driver.execute(statement);
    },
    batch: (statements, mode) => {
      for (const statement of statements) count(statement.sql);
      return connection.driver.batch(statements, mode);
    },
  };
  return { store: await createSqlStore(driver, connection.close), reads };
}

/** The page and total `query` must give over `rows`, as JSON texts. */
function expected(rows: readonly Submission[], query: SubmissionQuery & { device: string; status: string }) {
  const matches = rows.filter((row) => {
    const at = Date.parse(row.createdAt);
    return row.device === query.device && row.status === query.status &&
      (query.createdAfter === undefined || at > query.createdAfter) && (query.createdBefore === undefined || at < query.createdBefore);
  });
  matches.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.submissionId < b.submissionId ? -1 : 1));
  if (query.order === "desc") matches.reverse();
  return { items: matches.slice(query.offset, query.offset + query.limit).map((row) => JSON.stringify(row)), total: matches.length };
}

/** Lists `query` `times` times as JSON texts and as rows, each checked against `rows`. */
async function listEach(store: CompleteStore, rows: readonly Submission[], query: SubmissionQuery & { device: string; status: string }, times: number) {
  for (let i = 0; i < times; i++) {
    const page = await store.listSubmissionsAsJson!(ACCOUNT, query);
    assert.equal({ items: page.items, total: page.total }, expected(rows, query), `list ${i + 1} of ${JSON.stringify(query)}`);
    const asRows = await store.listSubmissions(ACCOUNT, query);
    assert.equal(asRows.items.map((item) => JSON.stringify(item)), page.items);
    assert.is(asRows.total, page.total);
  }
}

test("a list the merge read reads it at once, with the page and total of the usual way, and the usual way again after a few", async () => {
  const { store, reads } = await countingStore();
  try {
    // Tablets' completed leads are few among many rows: the counts choose the merge.
    const rows = Array.from({ length: 600 }, (_, i) => submission(i, i % 150 === 7 ? "tablet" : "desktop", i % 150 === 7 ? "completed" : "pending"));
    await store.importSubmissions(ACCOUNT, rows);
    for (const query of [
      { device: "tablet", status: "completed" as const, order: "desc" as const, limit: 10, offset: 0 },
      { device: "tablet", status: "completed" as const, order: "asc" as const, limit: 2, offset: 1, createdAfter: T0 + 100 * 60_000, createdBefore: T0 + 500 * 60_000 },
    ]) {
      const before = { ...reads };
      const lists = 20;
      await listEach(store, rows, query, lists);
      // Each kind of list (JSON texts, rows) read the walk once, then the merge at once 16 times, then the walk again.
      assert.is(reads.merges - before.merges, 2 * lists);
      assert.is(reads.walks - before.walks, 2 * 2);
    }

    // Many more of them: the counts now choose the walk, which the list reads again after a few merges.
    const query = { device: "tablet", status: "completed" as const, order: "desc" as const, limit: 10, offset: 0 };
    const more = Array.from({ length: 400 }, (_, i) => submission(600 + i, i % 2 === 0 ? "tablet" : "desktop", i % 2 === 0 ? "completed" : "pending"));
    for (const [i, row] of more.entries()) {
      if (i % 50 === 0) {
        const page = await store.listSubmissionsAsJson!(ACCOUNT, query);
        assert.equal({ items: page.items, total: page.total }, expected(rows, query), `after ${i} more`);
      }
      await store.insertSubmission(ACCOUNT, row);
      rows.push(row);
    }
    const before = { ...reads };
    for (let i = 0; i < 20; i++) {
      const page = await store.listSubmissionsAsJson!(ACCOUNT, query);
      assert.equal({ items: page.items, total: page.total }, expected(rows, query), `list ${i + 1} after the writes`);
    }
    // At most 16 merges before the walk is read again; from then on the walk alone.
    assert.ok(reads.merges - before.merges <= 16, `${reads.merges - before.merges} merges`);
    assert.ok(reads.walks - before.walks >= 20 - 16);
    const walks = reads.walks;
    const merges = reads.merges;
    for (let i = 0; i < 5; i++) await store.listSubmissionsAsJson!(ACCOUNT, query);
    assert.is(reads.walks - walks, 5);
    assert.is(reads.merges, merges);
  } finally {
    await store.close();
  }
});

test("a list whose walk found its page reads the walk without the counts' choice, with the page and total of the usual way, even once the walk no longer finds it", async () => {
  const { store, reads } = await countingStore();
  try {
    // Desktops' pending leads are most rows: the counts choose the walk, which finds the page.
    const rows = Array.from({ length: 600 }, (_, i) => submission(i, i % 10 === 3 ? "tablet" : "desktop", i % 10 === 3 ? "completed" : "pending"));
    await store.importSubmissions(ACCOUNT, rows);
    const queries = [
      { device: "desktop", status: "pending" as const, order: "desc" as const, limit: 10, offset: 0 },
      { device: "desktop", status: "pending" as const, order: "asc" as const, limit: 5, offset: 2, createdAfter: T0 + 100 * 60_000, createdBefore: T0 + 500 * 60_000 },
    ];
    for (const query of queries) {
      const before = { ...reads };
      const lists = 20;
      await listEach(store, rows, query, lists);
      // Each kind of list (JSON texts, rows) read the counts' choice once, then the walk alone 16 times, then the choice again.
      assert.is(reads.walks - before.walks, 2 * lists);
      assert.is(reads.merges, before.merges);
      assert.is(reads.choices - before.choices, 2 * 2);
    }

    // Newer rows that are no desktop's pending lead, more than a walk reads: the newest-first
    // walk read without the choice no longer finds the page, and the merge reads it.
    const query = queries[0]!;
    await store.listSubmissionsAsJson!(ACCOUNT, query);
    const more = Array.from({ length: 1000 }, (_, i) => submission(600 + i, "mobile", "completed"));
    await store.importSubmissions(ACCOUNT, more);
    rows.push(...more);
    const before = { ...reads };
    for (let i = 0; i < 3; i++) {
      const page = await store.listSubmissionsAsJson!(ACCOUNT, query);
      assert.equal({ items: page.items, total: page.total }, expected(rows, query), `list ${i + 1} after the writes`);
    }
    assert.ok(reads.merges - before.merges >= 1, `${reads.merges - before.merges} merges`);
  } finally {
    await store.close();
  }
});

test("readLately: a noted list is taken a few times, then no longer; a full memory starts over", () => {
  const lately = readLately(2);
  assert.not.ok(lately.take("a"));
  lately.note("a");
  let taken = 0;
  while (lately.take("a")) taken++;
  assert.ok(taken > 1 && taken <= 16, `${taken}`);
  assert.not.ok(lately.take("a"), "a list whose reads are used up is not taken");
  lately.note("a");
  assert.ok(lately.take("a"), "a list noted again is taken again");
  lately.note("b");
  lately.note("c");
  assert.not.ok(lately.take("a"));
  assert.ok(lately.take("c"));
});

test.run();
