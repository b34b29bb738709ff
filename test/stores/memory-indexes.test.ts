/**
 * The memory store's indexes (sorted chunked lists per tuple, merged pages, seeks to deep
 * offsets) under what the conformance suite's 36 rows never reach: thousands of rows (so lists
 * split into chunks and merge back), imports out of order interleaved with inserts, deletes
 * of the oldest and newest rows, status changes moving rows between tuples, and tuples left
 * empty. Every answer is checked against a plain model of the rows.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { seededRandom } from "../../bench/support/dataset.ts";
import type { SubmissionQuery, SubmissionStore } from "../../src/store.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import type { Device, Submission, SubmissionStatus } from "../../src/submission.ts";
import { matchesReferenceFilter } from "../../src/testing/fixtures.ts";

const ACCOUNT = "acct-indexes";
const T0 = Date.UTC(2025, 3, 1);
const POPUPS = ["popup_big", "popup_b", "popup_c"];
const DOMAINS = ["example.com", "shop.example.com"];
const DEVICES: Device[] = ["desktop", "mobile", "tablet"];

/** The rows an account holds, and what any list of them must answer. */
class Model {
  readonly rows = new Map<string, Submission>();
  /** The rows in ascending list order, while no row changes (`changed()` drops it). */
  private sorted: Submission[] | undefined;

  changed(): void {
    this.sorted = undefined;
  }

  expected(query: SubmissionQuery): { ids: string[]; total: number } {
    this.sorted ??= [...this.rows.values()].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.submissionId < b.submissionId ? -1 : 1));
    const matching = this.sorted.filter((row) => matchesReferenceFilter(row, query));
    if (query.order === "desc") matching.reverse();
    return { ids: matching.slice(query.offset, query.offset + query.limit).map((row) => row.submissionId), total: matching.length };
  }

  /** Rows in ascending list order. */
  ascending(): Submission[] {
    const ids = this.expected({ order: "asc", limit: Infinity, offset: 0 }).ids;
    return ids.map((id) => this.rows.get(id)!);
  }
}

/** Rows skewed onto one tuple (so its own list outgrows a chunk), with many shared milliseconds. */
function rowMaker(random: () => number) {
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  return (second: number): Submission => {
    const skewed = random() < 0.6;
    return {
      submissionId: crypto.randomUUID(),
      popupId: skewed ? POPUPS[0]! : pick(POPUPS),
      data: { email: `u${Math.floor(random() * 1e6)}@example.com` },
      domain: skewed ? DOMAINS[0]! : pick(DOMAINS),
      userAgent: "agent",
      device: skewed ? DEVICES[0]! : pick(DEVICES),
      status: (skewed || random() < 0.5 ? "pending" : "completed") as SubmissionStatus,
      createdAt: new Date(T0 + second * 1000).toISOString(),
    };
  };
}

function filters(): Array<Partial<SubmissionQuery>> {
  const fields = { popupId: POPUPS[0], domain: DOMAINS[0], device: DEVICES[0], status: "pending" as const };
  const keys = Object.keys(fields) as (keyof typeof fields)[];
  return Array.from({ length: 16 }, (_, mask) => Object.fromEntries(keys.filter((_, bit) => mask & (1 << bit)).map((key) => [key, fields[key]])));
}

async function expectAgreement(store: SubmissionStore, model: Model, what: string) {
  model.changed();
  const total = model.rows.size;
  const at = (second: number) => T0 + second * 1000;
  for (const filter of filters()) {
    for (const order of ["asc", "desc"] as const) {
      for (const offset of [0, 3, 1100, total - 5]) {
        for (const range of [{}, { createdAfter: at(300) - 0.5, createdBefore: at(900) }]) {
          const query: SubmissionQuery = { ...filter, ...range, order, offset: Math.max(0, offset), limit: 25 };
          const page = await store.listSubmissions(ACCOUNT, query);
          const expected = model.expected(query);
          const label = `${what}: ${JSON.stringify(query)}`;
          assert.equal(page.items.map((s) => s.submissionId), expected.ids, `items of ${label}`);
          assert.is(page.total, expected.total, `total of ${label}`);
        }
      }
    }
  }
  // whole walks cross every chunk boundary of the lists, in both directions
  for (const filter of [{}, { popupId: POPUPS[0] }]) {
    for (const order of ["asc", "desc"] as const) {
      const walked: string[] = [];
      for (let page = await store.walkSubmissions(ACCOUNT, { ...filter, order, limit: 97 }); page.length > 0; ) {
        walked.push(...page.map((s) => s.submissionId));
        const last = page.at(-1)!;
        page = await store.walkSubmissions(ACCOUNT, { ...filter, order, limit: 97, after: { createdAt: Date.parse(last.createdAt), submissionId: last.submissionId } });
      }
      assert.equal(walked, model.expected({ ...filter, order, limit: Infinity, offset: 0 }).ids, `${what}: walk ${order} ${JSON.stringify(filter)}`);
    }
  }
  for (const item of (await store.listSubmissions(ACCOUNT, { order: "desc", limit: 50, offset: 0 })).items) {
    assert.equal(item, model.rows.get(item.submissionId), `${what}: rows come back as stored`);
  }
}

const t = suite("memory store: indexes under churn");

t("out-of-order imports interleaved with inserts, status changes and deletes: lists and totals stay right", async () => {
  const random = seededRandom(6);
  const makeRow = rowMaker(random);
  const store = createMemoryStore();
  const model = new Model();
  const add = (row: Submission) => model.rows.set(row.submissionId, row);

  // in order at first (the append path), then imports anywhere in time and single inserts
  for (let i = 0; i < 1500; i++) {
    const row = makeRow(i);
    await store.insertSubmission(ACCOUNT, row);
    add(row);
  }
  for (let round = 0; round < 12; round++) {
    const batch = Array.from({ length: 50 + Math.floor(random() * 250) }, () => makeRow(Math.floor(random() * 1500)));
    assert.is(await store.importSubmissions(ACCOUNT, batch), batch.length);
    batch.forEach(add);
    const single = makeRow(round % 2 === 0 ? 1500 + round : Math.floor(random() * 1500));
    await store.insertSubmission(ACCOUNT, single);
    add(single);
  }
  assert.ok(model.rows.size > 3000);
  await expectAgreement(store, model, "after inserts");

  // the oldest and newest rows go, of the whole account and of one tuple, then a random third
  const ascending = model.ascending();
  const bigTuple = ascending.filter((r) => r.popupId === POPUPS[0] && r.domain === DOMAINS[0] && r.device === DEVICES[0] && r.status === "pending");
  const doomed = new Set([...ascending.slice(0, 3), ...ascending.slice(-3), bigTuple[0]!, bigTuple.at(-1)!]);
  // most of the older half (so chunks shrink and merge), a third of the rest
  ascending.forEach((row, i) => random() < (i < ascending.length / 2 ? 0.9 : 0.33) && doomed.add(row));
  for (const row of doomed) {
    assert.is(await store.deleteSubmission(ACCOUNT, row.submissionId), true);
    model.rows.delete(row.submissionId);
  }
  // a quarter change status, moving between tuples (some back and forth)
  for (const row of model.rows.values()) {
    if (random() < 0.25) {
      const status = row.status === "pending" ? "completed" : "pending";
      assert.is(await store.setSubmissionStatus(ACCOUNT, row.submissionId, status), true);
      row.status = status;
    }
  }
  await expectAgreement(store, model, "after deletes and status changes");

  // and rows arrive again where the holes are
  const refill = Array.from({ length: 800 }, () => makeRow(Math.floor(random() * 1600)));
  assert.is(await store.importSubmissions(ACCOUNT, refill), refill.length);
  refill.forEach(add);
  await expectAgreement(store, model, "after a refill");
});

t("rows appended in time order, three to a second (their ids then decide), with reads between them: lists and totals stay right", async () => {
  const makeRow = rowMaker(seededRandom(11));
  const store = createMemoryStore();
  const model = new Model();
  // past a chunk's worth in the skewed tuple, so appends start new chunks between the reads
  for (let i = 0; i < 2600; i++) {
    const row = makeRow(Math.floor(i / 3));
    await store.insertSubmission(ACCOUNT, row);
    model.rows.set(row.submissionId, row);
    model.changed();
    if (i % 400 === 0 || i === 2599) await expectAgreement(store, model, `after ${i + 1} rows`);
  }
});

t("a filter whose tuples were emptied by deletes and status changes lists nothing, then fills again", async () => {
  const store = createMemoryStore();
  const makeRow = rowMaker(seededRandom(7));
  const rows = Array.from({ length: 40 }, (_, i) => ({ ...makeRow(i), popupId: "popup_gone", status: "pending" as const }));
  await store.importSubmissions(ACCOUNT, rows);
  for (const row of rows.slice(0, 20)) await store.deleteSubmission(ACCOUNT, row.submissionId);
  for (const row of rows.slice(20)) await store.setSubmissionStatus(ACCOUNT, row.submissionId, "completed");
  for (const order of ["asc", "desc"] as const) {
    for (const filter of [{ popupId: "popup_gone", status: "pending" as const }, { status: "pending" as const }]) {
      assert.equal(await store.listSubmissions(ACCOUNT, { ...filter, order, limit: 10, offset: 0 }), { items: [], total: 0 });
      assert.equal(await store.walkSubmissions(ACCOUNT, { ...filter, order, limit: 10 }), []);
    }
  }
  assert.is((await store.listSubmissions(ACCOUNT, { popupId: "popup_gone", order: "asc", limit: 1, offset: 0 })).total, 20);
  await store.setSubmissionStatus(ACCOUNT, rows[39]!.submissionId, "pending");
  const back = await store.listSubmissions(ACCOUNT, { popupId: "popup_gone", status: "pending", order: "desc", limit: 10, offset: 0 });
  assert.equal(back.items.map((s) => s.submissionId), [rows[39]!.submissionId]);
  assert.is(back.total, 1);
});

t("rows read back as stored after most of the others are deleted or rewritten: megabytes of text, non-ASCII too, whose space is reused", async () => {
  const store = createMemoryStore();
  const makeRow = rowMaker(seededRandom(10));
  const model = new Model();
  // about 2 KB of JSON a row, so that the rows' text fills several blocks of a megabyte
  const rows = Array.from({ length: 3000 }, (_, i): Submission => ({ ...makeRow(i), data: { note: `${i % 7 === 0 ? "Jöhn 😀 " : ""}${"n".repeat(2000)}${i}` } }));
  await store.importSubmissions(ACCOUNT, rows);
  for (const row of rows) model.rows.set(row.submissionId, row);
  const random = seededRandom(11);
  for (const [i, row] of rows.entries()) {
    if (i % 4 === 0) continue;
    if (random() < 0.8) {
      assert.ok(await store.deleteSubmission(ACCOUNT, row.submissionId));
      model.rows.delete(row.submissionId);
    } else {
      const status = row.status === "pending" ? "completed" : "pending";
      assert.ok(await store.setSubmissionStatus(ACCOUNT, row.submissionId, status));
      model.rows.set(row.submissionId, { ...row, status });
    }
  }
  const added = Array.from({ length: 500 }, (_, i): Submission => ({ ...makeRow(3000 + i), data: { note: `${"a".repeat(1500)}${i}` } }));
  for (const row of added) {
    await store.insertSubmission(ACCOUNT, row);
    model.rows.set(row.submissionId, row);
  }
  for (const row of model.rows.values()) assert.equal(await store.getSubmission(ACCOUNT, row.submissionId), row);
  for (const row of rows) if (!model.rows.has(row.submissionId)) assert.is(await store.getSubmission(ACCOUNT, row.submissionId), undefined);
  await expectAgreement(store, model, "after churn over megabytes");
});

t("an import with a record whose createdAt is not a time fails and inserts nothing", async () => {
  const store = createMemoryStore();
  const makeRow = rowMaker(seededRandom(8));
  const good = Array.from({ length: 5 }, (_, i) => makeRow(i));
  let failed = false;
  try {
    await store.importSubmissions(ACCOUNT, [...good, { ...makeRow(9), createdAt: "yesterday" }]);
  } catch {
    failed = true;
  }
  assert.ok(failed, "the import must fail");
  assert.equal(await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 }), { items: [], total: 0 });
  assert.is(await store.importSubmissions(ACCOUNT, good), 5, "nothing of the failed import was kept");
});

t("idempotency: a record that expires before an older one is forgotten on time", async () => {
  const store = createMemoryStore();
  const [first, second, third] = Array.from({ length: 3 }, (_, i) => rowMaker(seededRandom(9 + i))(i));
  await store.insertSubmissionOnce(ACCOUNT, first!, { key: "long", fingerprint: "fp-long", expiresAt: T0 + 10_000 }, T0);
  await store.insertSubmissionOnce(ACCOUNT, second!, { key: "short", fingerprint: "fp-short", expiresAt: T0 + 1_000 }, T0);
  // "short" expired though "long", stored before it, has not
  assert.equal(await store.insertSubmissionOnce(ACCOUNT, third!, { key: "short", fingerprint: "fp-3", expiresAt: T0 + 20_000 }, T0 + 5_000), { inserted: true });
  const replay = await store.insertSubmissionOnce(ACCOUNT, third!, { key: "long", fingerprint: "fp-x", expiresAt: T0 + 20_000 }, T0 + 5_000);
  assert.equal(replay, { inserted: false, fingerprint: "fp-long", submission: first });
});

t.run();
