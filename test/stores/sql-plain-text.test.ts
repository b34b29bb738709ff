/**
 * The SQL store writes a row's text fields between quotes as they are, not by json_quote, where
 * the row's `plain_text` vouches that none holds a character JSON escapes (migration 16,
 * submission-row.ts). These pin that guarantee: the write path's test agrees with json_quote for
 * every character; rows whose fields hold quotes, backslashes and control characters, written
 * by every path, edited by hand, inserted by hand, or left by a release before migration 16,
 * still export (NDJSON and CSV), list and get as JSON (the HTTP list page and get) and appear in
 * the change log exactly as the memory store gives them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "@libsql/client";
import { openExport } from "../../src/export/export.ts";
import { eventPageText, getSubmissionAsJson, listSubmissionsAsJson, type SubmissionQuery, type SubmissionStore } from "../../src/store.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import { MIGRATIONS } from "../../src/stores/sql/migrations.ts";
import { holdsJsonEscape } from "../../src/stores/sql/submission-row.ts";
import type { Submission } from "../../src/submission.ts";

const test = suite("SQL store: text fields written unquoted where plain_text vouches for them");

const ACCOUNT = "acct_plain";
const AWKWARD = ['say "hi"', "back\\slash", "tab\there", "line\nbreak", "nul\u0000", "\u001f", "\u007f", "\u2028", "é 中文 😀", ""];

const submission = (i: number, text: string): Submission => ({
  submissionId: `0193f5c2-7b8e-7cc1-9a1e-${String(i).padStart(12, "0")}`,
  popupId: i % 4 === 0 ? `popup ${text}` : "popup",
  data: { email: `v${i}@example.com`, note: text },
  domain: i % 4 === 1 ? `example.com${text}` : "example.com",
  userAgent: i % 4 === 2 ? `Mozilla/5.0 ${text}` : "Mozilla/5.0",
  // the API takes one of DEVICES, but the column has no CHECK: a store must not rely on it
  device: (i % 4 === 3 ? `desktop${text}` : "desktop") as Submission["device"],
  status: i % 2 === 0 ? "pending" : "completed",
  createdAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
});

/** One submission per awkward text in each field, and as many plain ones. */
const SUBMISSIONS = AWKWARD.flatMap((text, t) => [0, 1, 2, 3].map((field) => submission(t * 8 + field, text))).concat(
  Array.from({ length: 8 }, (_, i) => submission(200 + i, "plain")),
);

/** Whether no text field of `s` holds a quote, a backslash or a control character. */
const isPlain = (s: Submission) => ![s.submissionId, s.popupId, s.domain, s.userAgent, s.device, s.status].some((text) => /["\\\u0000-\u001f]/.test(text));

async function exported(store: SubmissionStore, format: "ndjson" | "csv"): Promise<string> {
  return new Response(await openExport(store, ACCOUNT, { format, filter: {}, order: "asc", pageSize: 7 })).text();
}

/** The memory store's NDJSON and CSV exports of `submissions`: what every store must give. */
async function expected(submissions: readonly Submission[]): Promise<{ ndjson: string; csv: string }> {
  const memory = createMemoryStore();
  await memory.importSubmissions(ACCOUNT, submissions);
  return { ndjson: await exported(memory, "ndjson"), csv: await exported(memory, "csv") };
}

type SqlStore = Awaited<ReturnType<typeof createSqlStore>>;

/** Runs `run` on a fresh SQL store over an in-memory libSQL database, and closes it. */
async function withStore(run: (store: SqlStore, connection: ReturnType<typeof openLibsqlFile>) => Promise<void>): Promise<void> {
  const connection = openLibsqlFile(":memory:");
  const store = await createSqlStore(connection.driver, connection.close);
  try {
    await run(store, connection);
  } finally {
    await store.close();
  }
}

/** The created events' data in the change log, as the feed writes them. */
async function createdData(store: SqlStore): Promise<string[]> {
  const page = await store.readEventsAsJson!(ACCOUNT, { limit: 1000, types: ["submission.created"] });
  assert.ok(!page.expired);
  return (JSON.parse(`[${eventPageText(page)}]`) as { data: unknown }[]).map((event) => JSON.stringify(event.data));
}

/** Queries whose pages the SQL store reads in different ways: undated and dated, filtered or not, both orders, deep. */
const QUERIES: SubmissionQuery[] = [
  { order: "desc", limit: 10, offset: 0 },
  { order: "asc", limit: 7, offset: 14 },
  { order: "desc", limit: 10, offset: 0, status: "pending" },
  { order: "asc", limit: 5, offset: 3, popupId: "popup", status: "completed" },
  { order: "desc", limit: 10, offset: 0, createdAfter: Date.UTC(2025, 0, 1) + 5_000, createdBefore: Date.UTC(2025, 0, 1) + 250_000 },
  { order: "asc", limit: 6, offset: 2, domain: "example.com", createdAfter: Date.UTC(2025, 0, 1) },
  { order: "desc", limit: 100, offset: 0 },
];

/** The list pages of QUERIES and the get of each of `ids`, as JSON texts (the HTTP API's answers are these joined). */
async function listedAndGot(store: SubmissionStore, ids: readonly string[]): Promise<unknown[]> {
  const pages = [];
  for (const query of QUERIES) {
    const { items, total } = await listSubmissionsAsJson(store, ACCOUNT, query);
    pages.push({ items, total });
  }
  const got = [];
  for (const id of ids) got.push(await getSubmissionAsJson(store, ACCOUNT, id));
  return [pages, got];
}

/** Asserts that the SQL store lists and gets `submissions` as JSON as the memory store does. */
async function assertListsAsMemory(store: SqlStore, submissions: readonly Submission[]): Promise<void> {
  const memory = createMemoryStore();
  await memory.importSubmissions(ACCOUNT, submissions);
  const ids = [...submissions.map((s) => s.submissionId), "0193f5c2-7b8e-7cc1-9a1e-999999999999"];
  const [actual, wanted] = [await listedAndGot(store, ids), await listedAndGot(memory, ids)];
  assert.equal(actual, wanted);
  // and the texts are JSON.stringify's of the submissions
  const [, got] = actual as [unknown, (string | undefined)[]];
  assert.equal(got, [...submissions.map((s) => JSON.stringify(s)), undefined]);
}

async function assertReadsAsMemory(store: SqlStore, submissions: readonly Submission[]): Promise<void> {
  const { ndjson, csv } = await expected(submissions);
  assert.is(await exported(store, "ndjson"), ndjson);
  assert.is(await exported(store, "csv"), csv);
  assert.equal(await createdData(store), submissions.map((s) => JSON.stringify(s)));
  await assertListsAsMemory(store, submissions);
}

test("the write path's test of a text agrees with json_quote for every character", async () => {
  const connection = openLibsqlFile(":memory:");
  try {
    // every code point of the Basic Multilingual Plane but the surrogates, which a text cannot hold alone
    const { rows } = await connection.driver.execute({
      sql: `WITH RECURSIVE code (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM code WHERE n < 65535)
            SELECT n, json_quote(char(n)) = '"' || char(n) || '"' AS plain FROM code WHERE n NOT BETWEEN 55296 AND 57343 ORDER BY n`,
    });
    assert.is(rows.length, 65536 - 2048);
    const disagree = rows.filter((row) => holdsJsonEscape(String.fromCharCode(Number(row.n))) === (Number(row.plain) === 1)).map((row) => Number(row.n));
    assert.equal(disagree, []);
  } finally {
    await connection.close();
  }
});

test("rows written by each path, with quotes, backslashes and control characters in their text fields, read as the memory store's", () =>
  withStore(async (store, connection) => {
    const [imported, inserted, grouped, once] = [SUBMISSIONS.slice(0, 20), SUBMISSIONS.slice(20, 30), SUBMISSIONS.slice(30, 40), SUBMISSIONS.slice(40)];
    await store.importSubmissions(ACCOUNT, imported);
    for (const s of inserted) await store.insertSubmission(ACCOUNT, s);
    // creates arriving together share a group commit's multi-row statements
    await Promise.all(grouped.map((s) => store.insertSubmission(ACCOUNT, s)));
    for (const s of once) await store.insertSubmissionOnce(ACCOUNT, s, { key: s.submissionId, fingerprint: "f", expiresAt: Date.now() + 60_000 }, Date.now());
    const { rows } = await connection.driver.execute({ sql: "SELECT id, plain_text FROM submissions" });
    const flags = new Map(rows.map((row) => [String(row.id), Number(row.plain_text)]));
    for (const s of SUBMISSIONS) assert.is(flags.get(s.submissionId), isPlain(s) ? 1 : 0, s.submissionId);
    assert.ok([...flags.values()].includes(1) && [...flags.values()].includes(0));
    await assertReadsAsMemory(store, SUBMISSIONS);
  }),
);

test("a row edited or inserted by hand is quoted again: its fields are not vouched for by a stale flag", () =>
  withStore(async (store, connection) => {
    const plain = SUBMISSIONS.slice(-4);
    await store.importSubmissions(ACCOUNT, plain);
    const edited = plain.map((s, i) => ({ ...s, userAgent: `${s.userAgent} ${AWKWARD[i]}` }));
    for (const s of edited) {
      await connection.driver.execute({ sql: "UPDATE submissions SET user_agent = ? WHERE account_id = ? AND id = ?", args: [s.userAgent, ACCOUNT, s.submissionId] });
    }
    // nor does a flag set by hand vouch for what the row holds
    await connection.driver.execute({ sql: "UPDATE submissions SET plain_text = 1" });
    const byHand = { ...submission(300, "x"), domain: 'hand "made"', userAgent: "a\\b" };
    await connection.driver.execute({
      sql: "INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      args: [ACCOUNT, byHand.submissionId, byHand.popupId, byHand.domain, byHand.device, byHand.userAgent, byHand.status, Date.parse(byHand.createdAt), JSON.stringify(byHand.data)],
    });
    const { rows } = await connection.driver.execute({ sql: "SELECT plain_text FROM submissions WHERE id = ?", args: [byHand.submissionId] });
    assert.is(rows[0]!.plain_text, null);
    const { ndjson, csv } = await expected([...edited, byHand]);
    assert.is(await exported(store, "ndjson"), ndjson);
    assert.is(await exported(store, "csv"), csv);
    await assertListsAsMemory(store, [...edited, byHand]);
    // the log's created events show the rows as they are now
    assert.equal(await createdData(store), edited.map((s) => JSON.stringify(s)));
  }),
);

test("a list page's place (where its cursor continues) is read from its last text, whatever its id holds, the times' ties ordered by id", () =>
  withStore(async (store, connection) => {
    // ids a hand or an import of another service's data may hold; half of them at one instant
    const ids = AWKWARD.map((text, i) => `id ${i} ${text}`).concat(['"', "\\", '\\"', 'x\\\\"y']);
    const submissions = ids.map((id, i) => ({ ...submission(i, "plain"), submissionId: id, createdAt: new Date(Date.UTC(2025, 0, 1) + (i % 2) * 1000).toISOString() }));
    await store.importSubmissions(ACCOUNT, submissions);
    // a row edited by hand (not vouched for): its id is quoted
    await connection.driver.execute({ sql: "UPDATE submissions SET plain_text = NULL WHERE id = ?", args: [ids[1]!] });
    const memory = createMemoryStore();
    await memory.importSubmissions(ACCOUNT, submissions);
    for (const order of ["asc", "desc"] as const) {
      for (let offset = 0; offset < ids.length; offset++) {
        for (const query of [{ order, limit: 1, offset }, { order, limit: 3, offset, status: "pending" as const, popupId: "popup" }]) {
          const [actual, wanted] = [await listSubmissionsAsJson(store, ACCOUNT, query), await listSubmissionsAsJson(memory, ACCOUNT, query)];
          assert.equal({ ...actual, last: actual.last }, { ...wanted, last: wanted.last }, JSON.stringify(query));
        }
      }
    }
  }),
);

test("rows a database held before migration 16 are flagged by it, and read as the memory store's", async () => {
  const dir = mkdtempSync(join(tmpdir(), "formsink-plain-"));
  const url = `file:${join(dir, "old.db")}`;
  try {
    // a database as an old release left it (schema version 1), with rows written then
    const client = createClient({ url });
    await client.execute("CREATE TABLE formsink_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    await client.batch([{ sql: "INSERT INTO formsink_migrations VALUES (1, 'then')", args: [] }, ...MIGRATIONS[0]!.map((sql) => ({ sql, args: [] }))], "write");
    for (const s of SUBMISSIONS) {
      await client.execute({
        sql: "INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        args: [ACCOUNT, s.submissionId, s.popupId, s.domain, s.device, s.userAgent, s.status, Date.parse(s.createdAt), JSON.stringify(s.data)],
      });
    }
    client.close();
    const connection = openLibsqlFile(join(dir, "old.db"));
    const store = await createSqlStore(connection.driver, connection.close);
    try {
      const { rows } = await connection.driver.execute({ sql: "SELECT plain_text, COUNT(*) AS n FROM submissions GROUP BY 1 ORDER BY 1" });
      const plain = SUBMISSIONS.filter(isPlain).length;
      assert.equal(rows.map((row) => [Number(row.plain_text), Number(row.n)]), [[0, SUBMISSIONS.length - plain], [1, plain]]);
      const { ndjson, csv } = await expected(SUBMISSIONS);
      assert.is(await exported(store, "ndjson"), ndjson);
      assert.is(await exported(store, "csv"), csv);
      await assertListsAsMemory(store, SUBMISSIONS);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the feed re-serialises a created event's data edited by hand to hold raw line breaks, as before", () =>
  withStore(async (store, connection) => {
    const rows = SUBMISSIONS.slice(-6);
    await store.importSubmissions(ACCOUNT, rows);
    const data = '{\n  "email": "a@example.com",\r\n  "n": 1\n}';
    await connection.driver.execute({ sql: "UPDATE submissions SET data = ? WHERE account_id = ? AND id = ?", args: [data, ACCOUNT, rows[2]!.submissionId] });
    const page = await store.readEventsAsJson!(ACCOUNT, { limit: 1000 });
    assert.ok(!page.expired);
    assert.not.match(eventPageText(page), /[\r\n]/);
    const expectedRows = rows.map((s, i) => (i === 2 ? { ...s, data: JSON.parse(data) as Submission["data"] } : s));
    assert.equal(await createdData(store), expectedRows.map((s) => JSON.stringify(s)));
  }),
);

test.run();
