/**
 * The SQL store's NDJSON walk writes each row's data as stored and checks the page for line
 * breaks instead of each row (store.ts, `oneLinePerRow`): an export is still exactly the lines
 * `JSON.stringify` gives, and a row whose data was edited by hand to hold raw line breaks
 * still comes out as one line. A list's and a get's JSON texts are read the same way
 * (`holdsLineBreak`), and are still exactly what `JSON.stringify` gives.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openExport } from "../../src/export/export.ts";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import type { Submission } from "../../src/submission.ts";

const test = suite("SQL store: NDJSON lines");

const ACCOUNT = "acct_lines";
const ODD = ['a "quoted" word', "back\\slash", "line\nbreak", "cr\rlf\r\n", "tab\there", "\u0000\u0001\u001f\u007f", "\u2028\u2029", "=SUM(A1)", "+1", "-x", "@me", "é 中文 😀", "", "{\"json\":1}"];

const submission = (i: number): Submission => ({
  submissionId: `id-${String(i).padStart(3, "0")}`,
  popupId: `popup ${ODD[i % ODD.length]}`,
  // keys that vary by row, values of every JSON kind
  data: {
    [`key ${ODD[(i + 1) % ODD.length]}`]: ODD[i % ODD.length]!,
    n: i % 3 === 0 ? -12.5 : i,
    ...(i % 2 === 0 ? { yes: true, none: null, list: [1, "two", { three: ODD[(i + 2) % ODD.length]! }] } : {}),
  },
  domain: `example.com${ODD[(i + 3) % ODD.length]}`,
  userAgent: `Mozilla/5.0 ${ODD[(i + 4) % ODD.length]}`,
  device: "desktop",
  status: i % 4 === 0 ? "completed" : "pending",
  createdAt: new Date(Date.UTC(2025, 0, 1) + Math.floor(i / 2) * 1001).toISOString(),
});

const ndjsonExport = async (store: Awaited<ReturnType<typeof createSqlStore>>, pageSize: number) =>
  new Response(await openExport(store, ACCOUNT, { format: "ndjson", filter: {}, order: "asc", pageSize })).text();

test("an export is each submission's JSON.stringify on a line of its own, whatever its text holds", async () => {
  const connection = openLibsqlFile(":memory:");
  const store = await createSqlStore(connection.driver, connection.close);
  try {
    const rows = Array.from({ length: 45 }, (_, i) => submission(i));
    await store.importSubmissions(ACCOUNT, rows.slice(0, 30));
    for (const row of rows.slice(30)) await store.insertSubmission(ACCOUNT, row);
    const expected = rows.map((row) => `${JSON.stringify(row)}\n`).join("");
    for (const pageSize of [1000, 7]) assert.is(await ndjsonExport(store, pageSize), expected, `pages of ${pageSize}`);
  } finally {
    await store.close();
  }
});

test("a row whose data was edited by hand to hold raw line breaks is one line, its data re-serialised; the other rows are as before", async () => {
  const connection = openLibsqlFile(":memory:");
  const store = await createSqlStore(connection.driver, connection.close);
  try {
    const rows = Array.from({ length: 20 }, (_, i) => submission(i));
    await store.importSubmissions(ACCOUNT, rows);
    const edits = [
      { id: rows[3]!.submissionId, data: '{\n  "email": "a@example.com",\n  "n": 1\n}' },
      { id: rows[12]!.submissionId, data: '{"email":"b@example.com",\r"n":2}' },
      { id: rows[13]!.submissionId, data: '{"email":"c@example.com",\r\n"n":3}' },
    ];
    for (const { id, data } of edits) {
      await connection.driver.execute({ sql: "UPDATE submissions SET data = ? WHERE account_id = ? AND id = ?", args: [data, ACCOUNT, id] });
    }
    const edited = new Map(edits.map(({ id, data }) => [id, JSON.parse(data) as Submission["data"]]));
    const expected = rows.map((row) => `${JSON.stringify({ ...row, data: edited.get(row.submissionId) ?? row.data })}\n`).join("");
    for (const pageSize of [1000, 7]) {
      const text = await ndjsonExport(store, pageSize);
      assert.is(text, expected, `pages of ${pageSize}`);
      assert.not.match(text, "\r");
      assert.is(text.split("\n").length, rows.length + 1);
    }
    // the walk's JSON texts split from the same page
    const texts = await store.walkSubmissionsAsJson!(ACCOUNT, { order: "asc", limit: 1000 });
    assert.equal(texts, expected.slice(0, -1).split("\n"));
  } finally {
    await store.close();
  }
});

test("a list's and a get's JSON texts of rows whose data was edited by hand to hold raw line breaks are JSON.stringify's, as the other rows'", async () => {
  const connection = openLibsqlFile(":memory:");
  const store = await createSqlStore(connection.driver, connection.close);
  try {
    const rows = Array.from({ length: 20 }, (_, i) => submission(i));
    await store.importSubmissions(ACCOUNT, rows);
    const expected = (edited: Map<string, unknown>) => rows.map((row) => JSON.stringify({ ...row, data: edited.has(row.submissionId) ? edited.get(row.submissionId) : row.data }));
    const check = async (edited: Map<string, unknown>, what: string) => {
      const texts = expected(edited);
      for (const order of ["asc", "desc"] as const) {
        for (const filter of [{}, { status: "pending" as const }, { status: "completed" as const, device: "desktop" }]) {
          const page = await store.listSubmissionsAsJson!(ACCOUNT, { ...filter, order, limit: 100, offset: 0 });
          const wanted = rows.flatMap((row, i) => (Object.entries(filter).every(([key, value]) => row[key as keyof Submission] === value) ? [texts[i]!] : []));
          assert.equal(page.items, order === "asc" ? wanted : wanted.reverse(), `${what}: ${order} ${JSON.stringify(filter)}`);
          assert.is(page.total, wanted.length);
        }
      }
      for (const [i, row] of rows.entries()) assert.is(await store.getSubmissionAsJson!(ACCOUNT, row.submissionId), texts[i], `${what}: get ${row.submissionId}`);
    };
    await check(new Map(), "as imported");
    const edits = [
      { id: rows[3]!.submissionId, data: '{\n  "email": "a@example.com",\n  "n": 1\n}' },
      { id: rows[12]!.submissionId, data: '{"email":"b@example.com",\r"n":2}' },
      { id: rows[13]!.submissionId, data: '{"email": "c@example.com",\r\n"n":3}' },
      // spaces are kept as stored, as without a line break they always were
      { id: rows[14]!.submissionId, data: '{"email": "d@example.com", "n": 4}' },
    ];
    for (const { id, data } of edits) {
      await connection.driver.execute({ sql: "UPDATE submissions SET data = ? WHERE account_id = ? AND id = ?", args: [data, ACCOUNT, id] });
    }
    const edited = new Map<string, unknown>(edits.slice(0, 3).map(({ id, data }) => [id, JSON.parse(data)]));
    const spaced = edits[3]!;
    const texts = expected(edited);
    const page = await store.listSubmissionsAsJson!(ACCOUNT, { order: "asc", limit: 100, offset: 0 });
    const spacedAt = rows.findIndex((row) => row.submissionId === spaced.id);
    assert.is(page.items[spacedAt], texts[spacedAt]!.replace(JSON.stringify(rows[spacedAt]!.data), spaced.data));
    assert.ok(page.items.every((text) => !text.includes("\n") && !text.includes("\r")));
    await connection.driver.execute({ sql: "UPDATE submissions SET data = ? WHERE account_id = ? AND id = ?", args: [JSON.stringify(rows[spacedAt]!.data), ACCOUNT, spaced.id] });
    await check(edited, "edited");
  } finally {
    await store.close();
  }
});

test.run();
