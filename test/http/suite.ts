/**
 * The HTTP contract (spec/seed-interface.md and spec/http-api.md) as one suite that runs against
 * any target. It builds plain `Request`s for http://formsink.test and a target decides how they
 * reach the handler: called directly, or over a socket to a real server. It imports nothing
 * runtime-specific (no `node:*`), so the same file can run under Node, Bun, Deno and workerd.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey, revokeApiKey } from "../../src/auth/keys.ts";
import { ROUTES } from "../../src/handler.ts";
import { readCsvRows } from "../../src/import/csv-reader.ts";
import type { LogEntry, RequestLogEntry } from "../../src/options.ts";
import type { CompleteStore, SubmissionStore } from "../../src/store.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { createRetentionJob } from "../../src/privacy/retention.ts";
import type { Submission } from "../../src/submission.ts";
import { browserIngestSuite } from "./browser-suite.ts";
import { eventsSuite } from "./events-suite.ts";
import { webhooksSuite } from "./webhooks-suite.ts";
import {
  type Account, type CallOptions, expectError, expectJson, expectSubmission, type Fixture, GOOGLEBOT_UA, type HttpSuiteOptions,
  IPHONE_UA, listPage, MISSING_ID, mount, type Reply, type StartHttpTarget, totalOf,
} from "./fixture.ts";

export type { FetchHandler, HttpSuiteOptions, HttpTarget, StartHttpTarget } from "./fixture.ts";

const MAX_BODY_BYTES = 64 * 1024;

// Markers that must never reach a log entry.
const QUERY_MARKER = "query-marker-5c1e";
const BODY_MARKER = "body-marker-9f2a";

// ---- seeded data for the list tests -------------------------------------------------------

const BASE_TIME = Date.UTC(2025, 6, 12, 10, 30, 0);
const DEVICES = ["desktop", "mobile", "tablet"] as const;

/** When seed row `i` was created; rows 6 and 7 share a millisecond, so their order comes from the id. */
function seedTime(i: number): number {
  return BASE_TIME + (i === 7 ? 6 : i) * 60_000;
}

function seedRows(): Submission[] {
  return Array.from({ length: 12 }, (_, i): Submission => ({
    submissionId: crypto.randomUUID(),
    popupId: i < 5 ? "popup_a" : "popup_b",
    data: { email: `user${i}@example.com`, index: i },
    domain: i % 2 === 0 ? "example.com" : "shop.example.com",
    userAgent: "Mozilla/5.0 (X11; Linux x86_64)",
    device: DEVICES[i % 3]!,
    status: i % 4 === 0 ? "completed" : "pending",
    createdAt: new Date(seedTime(i)).toISOString(),
  }));
}

/** An account holding the 12 seed rows, inserted in a shuffled order. */
async function seededAccount(f: Fixture): Promise<Account & { rows: Submission[] }> {
  const account = await f.account();
  const rows = seedRows();
  for (const i of [5, 0, 11, 3, 7, 9, 1, 6, 10, 2, 8, 4]) await f.store.insertSubmission(account.accountId, rows[i]!);
  return { ...account, rows };
}

/** The contract's total order: createdAt, then submissionId, both in the one direction. */
function ordered(rows: readonly Submission[], direction: "asc" | "desc"): string[] {
  const sign = direction === "asc" ? 1 : -1;
  return [...rows]
    .sort((a, b) => sign * (Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.submissionId < b.submissionId ? -1 : 1)))
    .map((row) => row.submissionId);
}

const ids = (items: readonly Submission[]) => items.map((item) => item.submissionId);

async function* oneChunk(text: string): AsyncGenerator<string> {
  yield text;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}


// ---- request bodies ---------------------------------------------------------------------

function fieldsObject(count: number, prefix = "f"): Record<string, number> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, i]));
}

/** A valid create body of exactly `bytes` bytes (ASCII). */
function createBodyOfSize(bytes: number): string {
  const head = '{"popupId":"popup_big","data":{"text":"';
  const tail = '"}}';
  return head + "x".repeat(bytes - head.length - tail.length) + tail;
}

const BAD_QUERIES: [query: string, parameter: string][] = [
  ["limit=0", "limit"],
  ["limit=101", "limit"],
  ["limit=1e1", "limit"],
  ["limit=10.0", "limit"],
  ["limit=%205", "limit"],
  ["limit=", "limit"],
  ["limit=-1", "limit"],
  ["limit=ten", "limit"],
  ["offset=-1", "offset"],
  ["offset=abc", "offset"],
  ["offset=1.5", "offset"],
  ["offset=0x1", "offset"],
  ["offset=", "offset"],
  ["popupId=", "popupId"],
  [`popupId=${"p".repeat(257)}`, "popupId"],
  ["domain=", "domain"],
  [`domain=${"d".repeat(513)}`, "domain"],
  ["device=", "device"],
  [`device=${"x".repeat(129)}`, "device"],
  ["popupId=%FF", "popupId"],
  ["status=pending&domain=shop%C3", "domain"],
  ["status=done", "status"],
  ["status=PENDING", "status"],
  ["status=", "status"],
  ["orderBy=created", "orderBy"],
  ["orderBy=createdAt", "orderBy"],
  ["orderBy=created_at_asc", "orderBy"],
  ["orderBy=", "orderBy"],
  ["createdAfter=yesterday", "createdAfter"],
  ["createdAfter=2025-02-30T00:00:00Z", "createdAfter"],
  ["createdAfter=2025-07-12T10:30:00", "createdAfter"],
  ["createdAfter=2025-07-12T10:30Z", "createdAfter"],
  ["createdBefore=2025-07-12T10:30:60Z", "createdBefore"],
  ["createdAfter=", "createdAfter"],
  ["createdBefore=1752316200000", "createdBefore"],
  ["createdBefore=2025-07-12", "createdBefore"],
  // a known parameter given twice, even with the same value
  ["limit=1&limit=2", "limit"],
  ["offset=0&offset=0", "offset"],
  ["status=pending&status=pending", "status"],
  ["popupId=a&popupId=b", "popupId"],
  ["orderBy=created_at&orderBy=created_at_desc", "orderBy"],
];

/** Create bodies that are refused with 400, and a pattern the message must match. */
const BAD_CREATES: [name: string, body: string, message: RegExp][] = [
  ["popupId missing", '{"data":{"a":1}}', /popupId/],
  ["popupId empty", '{"popupId":"","data":{"a":1}}', /popupId/],
  ["popupId of 257 characters", `{"popupId":"${"p".repeat(257)}","data":{"a":1}}`, /popupId/],
  ["popupId not a string", '{"popupId":5,"data":{"a":1}}', /popupId/],
  ["data missing", '{"popupId":"p"}', /data/],
  ["data an array", '{"popupId":"p","data":[1,2]}', /data/],
  ["data null", '{"popupId":"p","data":null}', /data/],
  ["data a string", '{"popupId":"p","data":"hello"}', /data/],
  ["an unknown body field", '{"popupId":"p","data":{"a":1},"color":"red"}', /color/],
  ["a status on create", '{"popupId":"p","data":{"a":1},"status":"completed"}', /status/],
  ["an account id on create", '{"popupId":"p","data":{"a":1},"accountId":"someone-else"}', /accountId/],
  ["a submission id on create", `{"popupId":"p","data":{"a":1},"submissionId":"${MISSING_ID}"}`, /submissionId/],
  ["the body an array", '[{"popupId":"p","data":{"a":1}}]', /object/i],
  ["the body a string", '"popupId"', /object/i],
  ["the body null", "null", /object/i],
  ["invalid JSON", '{"popupId":"p","data":{"a":1}', /JSON/],
  ["an empty body", "", /empty/i],
  ["a blank body", "  \n", /empty/i],
  ["__proto__ at the top of data", '{"popupId":"p","data":{"__proto__":{"admin":true}}}', /__proto__/],
  ["constructor nested in data", '{"popupId":"p","data":{"a":{"b":{"constructor":"x"}}}}', /constructor/],
  ["prototype inside an array in data", '{"popupId":"p","data":{"list":[1,{"prototype":1}]}}', /prototype/],
  ["__proto__ at depth 4", '{"popupId":"p","data":{"a":{"b":{"c":{"__proto__":1}}}}}', /__proto__/],
  ["data 5 levels deep (objects)", '{"popupId":"p","data":{"a":{"b":{"c":{"d":{}}}}}}', /deep|depth|nest/i],
  ["data 5 levels deep (arrays)", '{"popupId":"p","data":{"a":[[[[]]]]}}', /deep|depth|nest/i],
  [
    "101 fields counted at every depth",
    JSON.stringify({ popupId: "p", data: { ...fieldsObject(50), nested: fieldsObject(50, "n") } }),
    /100/,
  ],
  ["101 top-level fields", JSON.stringify({ popupId: "p", data: fieldsObject(101) }), /100/],
  ["a data key of 129 characters", JSON.stringify({ popupId: "p", data: { ["k".repeat(129)]: 1 } }), /128/],
  ["a nested data key of 129 characters", JSON.stringify({ popupId: "p", data: { a: { ["k".repeat(129)]: 1 } } }), /128/],
  ["a data key of 129 emoji", JSON.stringify({ popupId: "p", data: { ["😀".repeat(129)]: 1 } }), /128/],
  ["a device outside the list", '{"popupId":"p","data":{"a":1},"device":"phone"}', /device/],
  ["a device not a string", '{"popupId":"p","data":{"a":1},"device":1}', /device/],
  ["an empty domain", '{"popupId":"p","data":{"a":1},"domain":""}', /domain/],
  ["a domain of 513 characters", `{"popupId":"p","data":{"a":1},"domain":"${"d".repeat(513)}"}`, /domain/],
  ["a userAgent not a string", '{"popupId":"p","data":{"a":1},"userAgent":42}', /userAgent/],
  ["a number too large for a double", '{"popupId":"p","data":{"n":1e999}}', /data\.n must be a finite number/],
  ["a lone surrogate in a data value", '{"popupId":"p","data":{"name":"\\ud800x"}}', /not valid Unicode.*data\.name/],
  ["a lone surrogate in a data key", '{"popupId":"p","data":{"\\udc00":1}}', /not valid Unicode/],
  // A few KB of brackets nest thousands of levels: refused by the depth limit, not a crash.
  ["data nested 20000 levels deep", `{"popupId":"p","data":{"a":${"[".repeat(20_000)}${"]".repeat(20_000)}}}`, /deep|depth|nest/i],
  ["the body nested 30000 levels deep", `${"[".repeat(30_000)}${"]".repeat(30_000)}`, /nested more than \d+ levels deep/],
];

/** Runs the whole contract against one target. */
export function httpSuite(target: string, start: StartHttpTarget, options: HttpSuiteOptions = {}): void {
  const createStore = options.createStore ?? (async () => createMemoryStore());
  mainSuite(target, start, createStore);
  exportCancelSuite(target, start, createStore);
  basePathSuite(target, start, createStore);
  failingStoreSuite(target, start, createStore);
  healthSuite(target, start, createStore);
  requestIdSuite(target, start, createStore);
  browserIngestSuite(target, start, createStore);
  privacySuite(target, start, createStore);
  eventsSuite(target, start, createStore);
  webhooksSuite(target, start, createStore);
}

function privacySuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: privacy`);
  let f: Fixture;
  t.before(async () => {
    f = await mount(start, createStore);
  });
  t.after(async () => {
    await (f as Fixture | undefined)?.stop();
  });
  const create = async (key: string, popupId: string, data: object) =>
    expectSubmission(expectJson(await f.call("POST", "/api/submission", { key, json: { popupId, data } }), 201));

  t("erasure: deletes every submission with the email, any case, across popups; the receipt reads back; again it finds nothing", async () => {
    const { key } = await f.account();
    const other = await f.account();
    const jane = [await create(key, "popup_a", { email: "jane@example.com" }), await create(key, "popup_b", { email: "Jane@Example.com", name: "Jane" })];
    const kept = await create(key, "popup_a", { email: "john@example.com" });
    const foreign = await create(other.key, "popup_a", { email: "jane@example.com" });

    const dry = expectJson(await f.call("POST", "/api/erasure", { key, json: { field: "email", value: "JANE@example.com", dryRun: true } }), 200) as Record<string, unknown>;
    assert.equal([dry.erasureId, dry.matched, dry.deleted, dry.dryRun], [null, 2, 0, true]);
    assert.is(await totalOf(f, key), 3, "a dry run deletes nothing");

    const reply = await f.call("POST", "/api/erasure", { key, json: { field: "email", value: "JANE@example.com" } });
    const receipt = expectJson(reply, 201) as Record<string, unknown>;
    assert.is(reply.headers.get("location"), `/api/erasure/${receipt.erasureId}`);
    assert.equal([receipt.field, receipt.matched, receipt.deleted, receipt.dryRun], ["email", 2, 2, false]);
    // No order is promised: sorted on a copy, since the read-back below must equal the receipt as answered.
    assert.equal([...(receipt.submissionIds as string[])].sort(), ids(jane).sort());
    assert.equal(Object.keys(receipt).sort(), ["completedAt", "deleted", "dryRun", "erasureId", "field", "matched", "requestedAt", "submissionIds"]);
    for (const gone of jane) expectError(await f.call("GET", `/api/submission/${gone.submissionId}`, { key }), 404, "Submission not found");
    assert.equal((await listPage(f, key)).items, [kept]);
    assert.equal((await listPage(f, other.key)).items, [foreign], "another account is untouched");

    const readBack = await f.call("GET", `/api/erasure/${receipt.erasureId}`, { key });
    assert.equal(expectJson(readBack, 200), receipt);
    assert.not.ok(readBack.text.toLowerCase().includes("jane@"), "the receipt never holds the value");
    expectError(await f.call("GET", `/api/erasure/${receipt.erasureId}`, { key: other.key }), 404, "Erasure not found");
    expectError(await f.call("GET", `/api/erasure/${MISSING_ID}`, { key }), 404, "Erasure not found");

    const again = expectJson(await f.call("POST", "/api/erasure", { key, json: { field: "email", value: "jane@example.com" } }), 201) as Record<string, unknown>;
    assert.equal([again.matched, again.deleted, again.submissionIds], [0, 0, []]);
  });

  t("erasure: bad bodies are 400 naming the field; a field that is not indexed names the ones that are", async () => {
    const { key } = await f.account();
    const cases: [object, RegExp][] = [
      [{ value: "a@example.com" }, /field/],
      [{ field: "email" }, /value/],
      [{ field: "", value: "x" }, /field/],
      [{ field: "email", value: "" }, /value/],
      [{ field: "email", value: "x", dryRun: "yes" }, /dryRun/],
      [{ field: "email", value: "x", extra: 1 }, /extra/],
      [{ field: "phone", value: "+1 555" }, /field must be one of the identifying fields this deployment indexes: email \(was "phone"\)/],
    ];
    for (const [json, message] of cases) assert.match(expectError(await f.call("POST", "/api/erasure", { key, json }), 400), message, JSON.stringify(json));
    expectError(await f.call("POST", "/api/erasure", { json: { field: "email", value: "x" } }), 401, "API key is required");
  });

  t("retention: rules are replaced and read back; the preview counts per rule and deletes nothing; the job deletes what it counted", async () => {
    const { key, accountId } = await f.account();
    const day = 24 * 60 * 60_000;
    const at = (daysAgo: number, popupId: string, status: "pending" | "completed"): Submission => ({
      submissionId: crypto.randomUUID(), popupId, data: { email: `${daysAgo}@example.com` }, domain: "example.com", userAgent: "ua",
      device: "desktop", status, createdAt: new Date(Date.now() - daysAgo * day).toISOString(),
    });
    await f.store.importSubmissions(accountId, [at(100, "popup_a", "completed"), at(95, "popup_a", "pending"), at(10, "popup_a", "completed"), at(40, "popup_b", "pending")]);

    assert.equal(expectJson(await f.call("GET", "/api/retention", { key }), 200), { rules: [] });
    const rules = [{ status: "completed", olderThanDays: 90 }, { popupId: "popup_b", olderThanDays: 30 }];
    assert.equal(expectJson(await f.call("PUT", "/api/retention", { key, json: { rules } }), 200), { rules });
    assert.equal(expectJson(await f.call("GET", "/api/retention", { key }), 200), { rules });

    const preview = expectJson(await f.call("GET", "/api/retention/preview", { key }), 200) as { rules: { matched: number }[] };
    assert.equal(preview.rules.map((rule) => rule.matched), [1, 1]);
    assert.is(await totalOf(f, key), 4, "a preview deletes nothing");
    await createRetentionJob(f.store).runOnce();
    assert.is(await totalOf(f, key), 2);
    const after = expectJson(await f.call("GET", "/api/retention/preview", { key }), 200) as { rules: { matched: number }[] };
    assert.equal(after.rules.map((rule) => rule.matched), [0, 0]);

    for (const json of [{}, { rules: [{ olderThanDays: 0 }] }, { rules: [{ olderThanDays: 1.5 }] }, { rules: [{ olderThanDays: 30, status: "done" }] }, { rules: [{ days: 30 }] }]) {
      assert.match(expectError(await f.call("PUT", "/api/retention", { key, json }), 400), /rules|olderThanDays|status|days/, JSON.stringify(json));
    }
    await f.call("PUT", "/api/retention", { key, json: { rules: [] } });
    assert.equal(expectJson(await f.call("GET", "/api/retention", { key }), 200), { rules: [] });
  });

  t.run();
}

function mainSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: contract`);
  let f: Fixture;
  t.before(async () => {
    f = await mount(start, createStore);
  });
  // `f` is unset when `before` failed: let that error be the one reported.
  t.after(async () => {
    await (f as Fixture | undefined)?.stop();
  });

  /** Creates one submission through the API and returns it. */
  const create = async (key: string, body: object = { popupId: "popup_1", data: { email: "a@example.com" } }) =>
    expectSubmission(expectJson(await f.call("POST", "/api/submission", { key, json: body }), 201));

  // ---- list -------------------------------------------------------------------------------

  t("list: defaults are limit 10, offset 0, newest first", async () => {
    const { key, rows } = await seededAccount(f);
    const page = await listPage(f, key);
    assert.is(page.limit, 10);
    assert.is(page.offset, 0);
    assert.is(page.total, 12);
    assert.equal(ids(page.items), ordered(rows, "desc").slice(0, 10));
    assert.equal(page.items[0], rows[11]);
  });

  t("list: limit and offset are applied and echoed", async () => {
    const { key, rows } = await seededAccount(f);
    const page = await listPage(f, key, "limit=5&offset=3");
    assert.is(page.limit, 5);
    assert.is(page.offset, 3);
    assert.is(page.total, 12);
    assert.equal(ids(page.items), ordered(rows, "desc").slice(3, 8));

    const one = await listPage(f, key, "limit=1");
    assert.is(one.limit, 1);
    assert.equal(ids(one.items), ordered(rows, "desc").slice(0, 1));
    const hundred = await listPage(f, key, "limit=100&offset=0");
    assert.is(hundred.limit, 100);
    assert.equal(ids(hundred.items), ordered(rows, "desc"));
  });

  t("list: orderBy=created_at is ascending, created_at_desc descending, ties broken by submissionId", async () => {
    const { key, rows } = await seededAccount(f);
    assert.equal(ids((await listPage(f, key, "orderBy=created_at&limit=100")).items), ordered(rows, "asc"));
    assert.equal(ids((await listPage(f, key, "orderBy=created_at_desc&limit=100")).items), ordered(rows, "desc"));
    assert.equal(ids((await listPage(f, key, "limit=100")).items), ordered(rows, "desc"));
  });

  t("list: paging with offset neither repeats nor skips an item", async () => {
    const { key, rows } = await seededAccount(f);
    for (const orderBy of ["created_at", "created_at_desc"] as const) {
      const seen: string[] = [];
      for (let offset = 0; offset < 12; offset += 5) {
        seen.push(...ids((await listPage(f, key, `orderBy=${orderBy}&limit=5&offset=${offset}`)).items));
      }
      assert.equal(seen, ordered(rows, orderBy === "created_at" ? "asc" : "desc"));
    }
  });

  t("list: nextCursor pages through every match once, with the total, and is null on the last page", async () => {
    const { key, rows } = await seededAccount(f);
    for (const [filter, keep] of [["", () => true], ["&status=pending&domain=example.com", (row: Submission) => row.status === "pending" && row.domain === "example.com"]] as const) {
      for (const orderBy of ["created_at", "created_at_desc"] as const) {
        const expected = ordered(rows.filter(keep), orderBy === "created_at" ? "asc" : "desc");
        const seen: string[] = [];
        let page = await listPage(f, key, `orderBy=${orderBy}&limit=2${filter}`);
        for (let pages = 1; page.nextCursor !== null; pages++) {
          assert.ok(pages < 20, "the cursor pages end");
          assert.is(page.total, expected.length);
          seen.push(...ids(page.items));
          page = await listPage(f, key, `orderBy=${orderBy}&limit=2${filter}&cursor=${encodeURIComponent(page.nextCursor)}`);
          assert.is(page.offset, 0);
        }
        seen.push(...ids(page.items));
        assert.equal(seen, expected, `${orderBy}${filter}`);
      }
    }
    // an offset page hands out a cursor too, unless it reaches the end
    const middle = await listPage(f, key, "limit=5&offset=5");
    assert.equal(ids((await listPage(f, key, `limit=5&cursor=${middle.nextCursor!}`)).items), ordered(rows, "desc").slice(10, 12));
    assert.is((await listPage(f, key, "limit=5&offset=7")).nextCursor, null);
    assert.is((await listPage(f, key, "limit=12")).nextCursor, null);
  });

  t("list: a cursor with offset, a malformed cursor and one made for other filters or order are 400 saying so", async () => {
    const { key } = await seededAccount(f);
    const cursor = (await listPage(f, key, "limit=2&popupId=popup_a")).nextCursor!;
    const refused = async (query: string) => expectError(await f.call("GET", `/api/submission?${query}`, { key }), 400);
    assert.match(await refused(`popupId=popup_a&offset=0&cursor=${cursor}`), /offset and cursor/);
    assert.match(await refused(`popupId=popup_a&offset=2&cursor=${cursor}`), /offset and cursor/);
    for (const other of ["", "popupId=popup_b&", "popupId=popup_a&status=pending&", "popupId=popup_a&orderBy=created_at&", `popupId=popup_a&createdAfter=2025-01-01T00:00:00Z&`]) {
      assert.match(await refused(`${other}cursor=${cursor}`), /^cursor was made for other filters or another orderBy/, other);
    }
    const malformed = ["", "abc", "not a cursor", `${cursor}x`, cursor.slice(1), btoa('[9,"d","x",1,"id"]'), "W10", "x".repeat(2000)];
    for (const bad of malformed) {
      assert.match(await refused(`popupId=popup_a&cursor=${encodeURIComponent(bad)}`), /^cursor is not a cursor this API made/, bad.slice(0, 40));
    }
    assert.is((await listPage(f, key, `popupId=popup_a&limit=2&cursor=${cursor}`)).items.length, 2, "the cursor itself works");
  });

  t("list: paging by cursor neither repeats nor skips what existed throughout, while others are created and deleted", async () => {
    const { key, rows } = await seededAccount(f);
    const survivors = new Set(rows.filter((_, i) => i % 3 !== 1).map((row) => row.submissionId));
    const doomed = rows.filter((row) => !survivors.has(row.submissionId));
    const seen: string[] = [];
    let page = await listPage(f, key, "limit=3");
    for (let pages = 0; ; pages++) {
      seen.push(...ids(page.items));
      // between pages: one row deleted (maybe behind the cursor, maybe ahead), one created (newest)
      const victim = doomed[pages];
      if (victim) expectJson(await f.call("DELETE", `/api/submission/${victim.submissionId}`, { key }), 200);
      await create(key);
      if (page.nextCursor === null) break;
      page = await listPage(f, key, `limit=3&cursor=${page.nextCursor}`);
    }
    assert.is(new Set(seen).size, seen.length, "no item twice");
    const order = ordered(rows, "desc");
    assert.equal(seen.filter((id) => survivors.has(id)), order.filter((id) => survivors.has(id)), "every survivor, in order");
    assert.ok(seen.every((id) => order.includes(id)), "created meanwhile: newer than the first page, so never reached");
  });

  t("list: each filter narrows the list and total counts every match", async () => {
    const { key, rows } = await seededAccount(f);
    const cases: [query: string, keep: (row: Submission) => boolean][] = [
      ["popupId=popup_a", (row) => row.popupId === "popup_a"],
      ["domain=shop.example.com", (row) => row.domain === "shop.example.com"],
      ["device=mobile", (row) => row.device === "mobile"],
      ["status=completed", (row) => row.status === "completed"],
      ["status=pending", (row) => row.status === "pending"],
      [
        "popupId=popup_b&status=pending&domain=example.com",
        (row) => row.popupId === "popup_b" && row.status === "pending" && row.domain === "example.com",
      ],
      ["popupId=popup_unknown", () => false],
      ["device=bot", () => false],
    ];
    for (const [query, keep] of cases) {
      const matching = rows.filter(keep);
      const page = await listPage(f, key, `${query}&limit=2`);
      assert.is(page.total, matching.length, `total for ${query}`);
      assert.equal(ids(page.items), ordered(matching, "desc").slice(0, 2), `items for ${query}`);
    }
  });

  t("list: an offset past the end gives no items and the true total", async () => {
    const { key } = await seededAccount(f);
    for (const query of ["offset=12", "offset=500&limit=3", "offset=5&popupId=popup_a"]) {
      const page = await listPage(f, key, query);
      assert.equal(page.items, [], query);
    }
    assert.is((await listPage(f, key, "offset=500")).total, 12);
    assert.is((await listPage(f, key, "offset=500")).offset, 500);
    assert.is((await listPage(f, key, "offset=5&popupId=popup_a")).total, 5);
  });

  t("list: createdAfter and createdBefore are exclusive bounds", async () => {
    const { key, rows } = await seededAccount(f);
    const at = (i: number) => encodeURIComponent(new Date(seedTime(i)).toISOString());
    const expect = async (query: string, keep: (i: number) => boolean) => {
      const page = await listPage(f, key, `${query}&limit=100&orderBy=created_at`);
      const matching = rows.filter((_, i) => keep(i));
      assert.is(page.total, matching.length, query);
      assert.equal(ids(page.items), ordered(matching, "asc"), query);
    };
    await expect(`createdAfter=${at(3)}`, (i) => i > 3);
    await expect(`createdBefore=${at(3)}`, (i) => i < 3);
    await expect(`createdAfter=${at(2)}&createdBefore=${at(5)}`, (i) => i === 3 || i === 4);
    // rows 6 and 7 share their createdAt: both are on the same side of a bound
    await expect(`createdAfter=${at(6)}`, (i) => i > 7);
    await expect(`createdBefore=${at(8)}&createdAfter=${at(5)}`, (i) => i === 6 || i === 7);
    // one millisecond earlier includes the row; the same instant written with an offset excludes it
    await expect(`createdAfter=${encodeURIComponent(new Date(seedTime(3) - 1).toISOString())}`, (i) => i >= 3);
    await expect(`createdAfter=${encodeURIComponent("2025-07-12T12:33:00+02:00")}`, (i) => i > 3);
    // digits past the millisecond count, however many: just after row 3's instant excludes
    // it as a lower bound and includes it as an upper one
    const justAfter3 = encodeURIComponent(new Date(seedTime(3)).toISOString().replace("Z", "0001Z"));
    await expect(`createdAfter=${justAfter3}`, (i) => i > 3);
    await expect(`createdBefore=${justAfter3}`, (i) => i <= 3);
    // filters and bounds combine, and total follows both
    await expect(`createdAfter=${at(3)}&status=pending`, (i) => i > 3 && rows[i]!.status === "pending");
  });

  t("list: unknown query parameters are ignored", async () => {
    const { key, rows } = await seededAccount(f);
    const page = await listPage(f, key, `limit=2&foo=bar&foo=baz&${QUERY_MARKER}=1&page=7&sort=asc`);
    assert.is(page.limit, 2);
    assert.is(page.offset, 0);
    assert.is(page.total, 12);
    assert.equal(ids(page.items), ordered(rows, "desc").slice(0, 2));
  });

  t("list: values outside their constraint are 400 with a message naming the parameter", async () => {
    const { key } = await f.account();
    for (const [query, parameter] of BAD_QUERIES) {
      const message = expectError(await f.call("GET", `/api/submission?${query}`, { key }), 400);
      assert.ok(message.includes(parameter), `message for ${query.slice(0, 40)} does not name ${parameter}: ${message}`);
    }
  });

  t("list: values at the edge of their constraint are accepted", async () => {
    const { key } = await f.account();
    const accepted = [
      "limit=1", "limit=100", "limit=007", "offset=0", `popupId=${"p".repeat(256)}`, `domain=${"d".repeat(512)}`,
      `device=${"x".repeat(128)}`, "device=x", "status=pending", "status=completed", "orderBy=created_at",
      "orderBy=created_at_desc", "createdAfter=2025-07-12T10:30:00Z", "createdBefore=2025-07-12T10:30:00.123456-05:30", "createdAfter=2025-07-12t10:30:00z",
      "createdBefore=2016-12-31T23:59:60Z", "popupId=%EF%BF%BD", "domain=%zz",
    ];
    for (const query of accepted) {
      const page = await listPage(f, key, query);
      assert.is(page.total, 0, query);
    }
    assert.is((await listPage(f, key, "limit=007")).limit, 7);
  });

  // ---- authentication and authorization ---------------------------------------------------

  /** Every route, with a real submission id where the path takes one. */
  const everyRoute = (id: string): [method: string, path: string, options: CallOptions][] => [
    ["GET", "/api/submission", {}],
    ["POST", "/api/submission", { json: { popupId: "p", data: { a: 1 } } }],
    ["GET", `/api/submission/${id}`, {}],
    ["PATCH", `/api/submission/${id}`, { json: { status: "completed" } }],
    ["DELETE", `/api/submission/${id}`, {}],
    ["GET", "/api/submission/export", {}],
  ];

  t("auth: a missing x-api-key is 401 'API key is required' on every route", async () => {
    const owner = await f.account();
    const submission = await create(owner.key);
    for (const [method, path, options] of [...everyRoute(submission.submissionId), ["GET", "/api/submission/not-an-id", {}] as const]) {
      expectError(await f.call(method, path, options), 401, "API key is required");
    }
    // nothing happened to the data
    const page = await listPage(f, owner.key);
    assert.is(page.total, 1);
    assert.equal(page.items[0], submission);
  });

  t("auth: a key sent as Authorization: Bearer, or as x-api-key in the URL, is pointed to the x-api-key header", async () => {
    const owner = await f.account();
    for (const [method, path, options] of everyRoute(MISSING_ID)) {
      const bearer = { ...options, headers: { authorization: `Bearer ${owner.key}` } };
      expectError(await f.call(method, path, bearer), 401, "API key is required: send it in the x-api-key header (the Authorization header is not read)");
    }
    const publishable = await createApiKey(f.store, { account: "account-url-key", kind: "publishable", domains: ["shop.example.com"] });
    f.keys.push(publishable.key);
    for (const name of ["x-api-key", "X-Api-Key"]) {
      expectError(await f.call("GET", `/api/submission?${name}=${publishable.key}`), 400, /not in the URL$/);
    }
  });

  t("auth: an unknown or garbled key is 401 'Invalid API key' on every route", async () => {
    const owner = await f.account();
    const submission = await create(owner.key);
    const lastChar = owner.key.at(-1) === "a" ? "b" : "a";
    const badKeys = [
      "nonsense",
      `${owner.key.slice(0, -1)}${lastChar}`, // right id, wrong secret
      owner.key.replace(/^fs_sk_/, "fs_pk_"), // right secret, wrong kind
      `fs_sk_AAAAAAAAAAAA_${"A".repeat(40)}`, // well formed, unknown id
      `${owner.key}x`,
      owner.key.toUpperCase(),
    ];
    for (const key of badKeys) {
      for (const [method, path, options] of everyRoute(submission.submissionId)) {
        expectError(await f.call(method, path, { ...options, key }), 401, "Invalid API key");
      }
    }
    const page = await listPage(f, owner.key);
    assert.is(page.total, 1);
    assert.equal(page.items[0], submission);
  });

  t("auth: a revoked key is refused on the very next request", async () => {
    const account = await f.account();
    const other = await createApiKey(f.store, { account: "account-revocation" });
    f.keys.push(other.key);
    const revoked = await createApiKey(f.store, { account: "account-revocation" });
    f.keys.push(revoked.key);
    assert.is((await listPage(f, revoked.key)).total, 0);
    assert.ok(await revokeApiKey(f.store, revoked.prefix));
    for (const [method, path, options] of everyRoute(MISSING_ID)) {
      expectError(await f.call(method, path, { ...options, key: revoked.key }), 401, "Invalid API key");
    }
    // the account's other key, and other accounts, are unaffected
    assert.is((await listPage(f, other.key)).total, 0);
    assert.is((await listPage(f, account.key)).total, 0);
  });

  t("auth: a publishable key is 403 on every route", async () => {
    const owner = await f.account();
    const submission = await create(owner.key);
    const publishable = await createApiKey(f.store, { account: "account-1", kind: "publishable", domains: ["shop.example.com"] });
    f.keys.push(publishable.key);
    // POST comes from a page outside the key's domains, so it stays 403 once publishable ingest exists
    const headers = { origin: "https://evil.example" };
    for (const [method, path, options] of everyRoute(submission.submissionId)) {
      expectError(await f.call(method, path, { ...options, headers, key: publishable.key }), 403);
    }
    const page = await listPage(f, owner.key);
    assert.is(page.total, 1);
    assert.equal(page.items[0], submission);
  });

  t("auth: another account's submission is 404 like one that does not exist", async () => {
    const owner = await f.account();
    const stranger = await f.account();
    const submission = await create(owner.key);
    const path = `/api/submission/${submission.submissionId}`;
    for (const [method, options] of [["GET", {}], ["PATCH", { json: { status: "completed" } }], ["DELETE", {}]] as const) {
      const theirs = expectError(await f.call(method, path, { ...options, key: stranger.key }), 404, "Submission not found");
      const missing = expectError(await f.call(method, `/api/submission/${MISSING_ID}`, { ...options, key: stranger.key }), 404);
      assert.is(theirs, missing);
    }
    assert.is((await listPage(f, stranger.key)).total, 0);
    // untouched for its owner
    assert.equal(expectJson(await f.call("GET", path, { key: owner.key }), 200), submission);
  });

  t("auth: a malformed submission id is 404 'Submission not found'", async () => {
    const { key } = await f.account();
    await create(key);
    const malformed = ["not-a-uuid", "123", MISSING_ID.replaceAll("-", ""), `${MISSING_ID}0`, `${MISSING_ID.slice(0, -1)}g`, "%20"];
    for (const id of malformed) {
      for (const [method, options] of [["GET", {}], ["PATCH", { json: { status: "completed" } }], ["DELETE", {}]] as const) {
        expectError(await f.call(method, `/api/submission/${id}`, { ...options, key }), 404, "Submission not found");
      }
    }
    assert.is(await totalOf(f, key), 1);
  });

  // ---- create -----------------------------------------------------------------------------

  t("create: 201 with the submission, a Location, and get/list return the same", async () => {
    const { key } = await f.account();
    const data = { email: "jane@example.com", name: "Jane <b>Doe</b> & \"co\"", agreed: true, age: 42, note: null, tags: ["a", "b"] };
    const reply = await f.call("POST", "/api/submission", {
      key,
      json: { popupId: "popup_123", data, domain: "example.com" },
      headers: { "user-agent": IPHONE_UA },
    });
    const submission = expectSubmission(expectJson(reply, 201));
    assert.is(submission.popupId, "popup_123");
    assert.equal(submission.data, data, "data is stored as given, without escaping");
    assert.is(submission.domain, "example.com");
    assert.is(submission.userAgent, IPHONE_UA);
    assert.is(submission.device, "mobile");
    assert.is(submission.status, "pending");
    assert.is(new Date(submission.createdAt).toISOString(), submission.createdAt);
    assert.is(reply.headers.get("location"), `/api/submission/${submission.submissionId}`);

    assert.equal(expectJson(await f.call("GET", `/api/submission/${submission.submissionId}`, { key }), 200), submission);
    const page = await listPage(f, key);
    assert.is(page.total, 1);
    assert.equal(page.items, [submission]);
  });

  t("create: device comes from the User-Agent unless it is given; userAgent may be given", async () => {
    const { key } = await f.account();
    const bot = await f.call("POST", "/api/submission", {
      key, json: { popupId: "p", data: { a: 1 } }, headers: { "user-agent": GOOGLEBOT_UA },
    });
    assert.is(expectSubmission(expectJson(bot, 201)).device, "bot");
    const given = await f.call("POST", "/api/submission", {
      key, json: { popupId: "p", data: { a: 1 }, device: "tablet" }, headers: { "user-agent": IPHONE_UA },
    });
    assert.is(expectSubmission(expectJson(given, 201)).device, "tablet");
    const fromBody = await f.call("POST", "/api/submission", {
      key, json: { popupId: "p", data: { a: 1 }, userAgent: IPHONE_UA }, headers: { "user-agent": GOOGLEBOT_UA },
    });
    const submission = expectSubmission(expectJson(fromBody, 201));
    assert.is(submission.userAgent, IPHONE_UA);
    assert.is(submission.device, "mobile");
    assert.is(await totalOf(f, key), 3);
  });

  t("create: a User-Agent header longer than a body's userAgent may be is kept cut to that length", async () => {
    const { key } = await f.account();
    const long = `${IPHONE_UA} ${"x".repeat(2000)}`;
    const reply = await f.call("POST", "/api/submission", { key, json: { popupId: "p", data: { a: 1 } }, headers: { "user-agent": long } });
    const submission = expectSubmission(expectJson(reply, 201));
    assert.is(submission.userAgent, long.slice(0, 1024));
    assert.is(submission.device, "mobile");
    const refused = await f.call("POST", "/api/submission", { key, json: { popupId: "p", data: { a: 1 }, userAgent: long } });
    expectError(refused, 400, /^userAgent must be at most 1024 characters long \(was \d+\)/);
  });

  t("create and list: lengths count characters (code points), as JSON Schema's maxLength does", async () => {
    const { key } = await f.account();
    // 256 emoji: 256 code points, 512 UTF-16 code units
    const popupId = "😀".repeat(256);
    const created = expectSubmission(expectJson(await f.call("POST", "/api/submission", { key, json: { popupId, data: {}, userAgent: "é😀".repeat(512) } }), 201));
    assert.is(created.popupId, popupId);
    assert.is((await listPage(f, key, `popupId=${encodeURIComponent(popupId)}`)).total, 1);
    expectError(await f.call("POST", "/api/submission", { key, json: { popupId: `${popupId}x`, data: {} } }), 400, "popupId must be 1 to 256 characters long (was 257)");
    expectError(await f.call("GET", `/api/submission?popupId=${encodeURIComponent(`${popupId}😀`)}`, { key }), 400, "popupId must be 1 to 256 characters long (was 257)");
    expectError(await f.call("POST", "/api/submission", { key, json: { popupId: "", data: {} } }), 400, "popupId must be 1 to 256 characters long (was 0)");
  });

  t("create: the id is a UUIDv7 whose timestamp is the submission's createdAt", async () => {
    const { key } = await f.account();
    for (let i = 0; i < 20; i++) {
      const submission = expectSubmission(expectJson(await f.call("POST", "/api/submission", { key, json: { popupId: "p", data: { i } } }), 201));
      const hex = submission.submissionId.replaceAll("-", "");
      assert.is(hex[12], "7", "version 7");
      assert.is(parseInt(hex.slice(0, 12), 16), Date.parse(submission.createdAt), submission.submissionId);
    }
  });

  t("create: two submissions get different ids", async () => {
    const { key } = await f.account();
    const first = await create(key);
    const second = await create(key);
    assert.is.not(first.submissionId, second.submissionId);
    assert.is(await totalOf(f, key), 2);
  });

  t("create: bodies at the edge of every limit are accepted", async () => {
    const { key } = await f.account();
    const accepted: [name: string, body: string][] = [
      ["popupId of 256 characters", JSON.stringify({ popupId: "p".repeat(256), data: {} })],
      ["data 4 levels deep", '{"popupId":"p","data":{"a":{"b":{"c":{"leaf":1}}}}}'],
      ["arrays 4 levels deep", '{"popupId":"p","data":{"a":[[[1]]]}}'],
      ["100 fields counted at every depth", JSON.stringify({ popupId: "p", data: { ...fieldsObject(50), nested: fieldsObject(49, "n") } })],
      ["a data key of 128 characters", JSON.stringify({ popupId: "p", data: { ["k".repeat(128)]: 1 } })],
      ["a data key of 128 emoji (code points, as everywhere)", JSON.stringify({ popupId: "p", data: { ["😀".repeat(128)]: 1 } })],
      ["a domain of 512 characters", JSON.stringify({ popupId: "p", data: {}, domain: "d".repeat(512) })],
      ["a body of exactly 64 KiB", createBodyOfSize(MAX_BODY_BYTES)],
    ];
    for (const [name, body] of accepted) {
      const reply = await f.call("POST", "/api/submission", { key, rawJson: body });
      assert.is(reply.status, 201, `${name}: ${reply.text.slice(0, 200)}`);
    }
    const charset = await f.call("POST", "/api/submission", {
      key, json: { popupId: "p", data: { a: 1 } }, headers: { "content-type": "application/json; charset=utf-8" },
    });
    assert.is(charset.status, 201, charset.text);
    assert.is(await totalOf(f, key), accepted.length + 1);
  });

  t("create: invalid bodies are 400 naming the problem, and nothing is stored", async () => {
    const { key } = await f.account();
    for (const [name, body, message] of BAD_CREATES) {
      const text = expectError(await f.call("POST", "/api/submission", { key, rawJson: body }), 400);
      assert.match(text, message, `${name}: ${text}`);
      assert.is(await totalOf(f, key), 0, `${name} stored something`);
    }
  });

  t("create: a body with thousands of problems gets a short message that counts the rest", async () => {
    const { key } = await f.account();
    const unknown = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`f${i}`, 0]));
    const text = expectError(await f.call("POST", "/api/submission", { key, json: { popupId: "p", data: {}, ...unknown } }), 400);
    assert.match(text, /f0 is not a known submission field/);
    assert.match(text, /and 2995 more problems$/);
    assert.ok(text.length < 1000, `message of ${text.length} characters`);
  });

  t("create: bytes that are not UTF-8 are 400, and nothing is stored", async () => {
    const { key } = await f.account();
    const prefix = new TextEncoder().encode('{"popupId":"p","data":{"name":"');
    for (const invalid of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const bytes = new Uint8Array([...prefix, ...invalid, ...new TextEncoder().encode('"}}')]);
      const reply = await f.call("POST", "/api/submission", { key, body: bytes, headers: { "content-type": "application/json" } });
      expectError(reply, 400, /UTF-8/);
    }
    assert.is(await totalOf(f, key), 0);
  });

  t("create: a body that is not JSON is 415", async () => {
    const { key } = await f.account();
    const json = JSON.stringify({ popupId: "p", data: { a: 1 } });
    for (const contentType of ["text/plain", "application/xml", "text/json"]) {
      expectError(await f.call("POST", "/api/submission", { key, body: json, headers: { "content-type": contentType } }), 415);
    }
    // a body without any content type
    expectError(await f.call("POST", "/api/submission", { key, body: new TextEncoder().encode(json) }), 415);
    // a charset other than UTF-8, or a compressed body, would be misread: refused, not guessed at
    for (const contentType of ["application/json; charset=utf-16", "application/json;charset=latin1", 'application/json; charset=""']) {
      expectError(await f.call("POST", "/api/submission", { key, body: json, headers: { "content-type": contentType } }), 415, /charset must be utf-8/);
    }
    for (const encoding of ["gzip", "br"]) {
      const reply = await f.call("POST", "/api/submission", {
        key, body: json, headers: { "content-type": "application/json", "content-encoding": encoding },
      });
      expectError(reply, 415, `Content-Encoding ${encoding} is not supported; send the body uncompressed`);
    }
    const quotedUtf8 = await f.call("POST", "/api/submission", { key, body: json, headers: { "content-type": 'application/json; charset="UTF-8"' } });
    assert.is(quotedUtf8.status, 201, quotedUtf8.text);
    assert.is(await totalOf(f, key), 1, "only the UTF-8 body was stored");
  });

  t("create: a body over 64 KiB is 413", async () => {
    const { key } = await f.account();
    expectError(await f.call("POST", "/api/submission", { key, rawJson: createBodyOfSize(MAX_BODY_BYTES + 1) }), 413);
    expectError(await f.call("POST", "/api/submission", { key, rawJson: createBodyOfSize(4 * MAX_BODY_BYTES) }), 413);
    assert.is(await totalOf(f, key), 0);
  });

  // ---- update status ----------------------------------------------------------------------

  t("patch: 200 with the exact confirmation; the status sticks; any move is allowed", async () => {
    const { key } = await f.account();
    const submission = await create(key);
    const path = `/api/submission/${submission.submissionId}`;
    for (const status of ["completed", "completed", "pending", "pending", "completed"] as const) {
      const body = expectJson(await f.call("PATCH", path, { key, json: { status } }), 200);
      assert.equal(body, { message: "Submission status updated", submissionId: submission.submissionId, status });
      assert.equal(expectJson(await f.call("GET", path, { key }), 200), { ...submission, status });
    }
    const completed = await listPage(f, key, "status=completed");
    assert.equal(ids(completed.items), [submission.submissionId]);
  });

  t("patch: other fields, a bad status or a bad body are 400 and change nothing", async () => {
    const { key } = await f.account();
    const submission = await create(key);
    const path = `/api/submission/${submission.submissionId}`;
    const bad: [body: string, message: RegExp][] = [
      ['{"status":"completed","popupId":"other"}', /popupId/],
      ['{"status":"completed","data":{}}', /data/],
      ['{"status":"done"}', /status/],
      ['{"status":"COMPLETED"}', /status/],
      ['{"status":null}', /status/],
      ["{}", /status/],
      ['["completed"]', /object/i],
      ['"completed"', /object/i],
      ['{"status":', /JSON/],
      ["", /empty/i],
      [`{"status":${"[".repeat(30_000)}${"]".repeat(30_000)}}`, /nested more than \d+ levels deep/],
    ];
    for (const [body, message] of bad) {
      const text = expectError(await f.call("PATCH", path, { key, rawJson: body }), 400);
      assert.match(text, message, `${body.slice(0, 80)}: ${text}`);
    }
    expectError(await f.call("PATCH", path, { key, body: '{"status":"completed"}', headers: { "content-type": "text/plain" } }), 415);
    assert.equal(expectJson(await f.call("GET", path, { key }), 200), submission);
  });

  t("patch: an unknown submission is 404 'Submission not found'", async () => {
    const { key } = await f.account();
    expectError(await f.call("PATCH", `/api/submission/${MISSING_ID}`, { key, json: { status: "completed" } }), 404, "Submission not found");
    assert.is(await totalOf(f, key), 0);
  });

  // ---- delete -----------------------------------------------------------------------------

  t("delete: 200 with the exact confirmation, then gone; a second delete is 404", async () => {
    const { key } = await f.account();
    const kept = await create(key);
    const doomed = await create(key);
    const path = `/api/submission/${doomed.submissionId}`;
    assert.equal(expectJson(await f.call("DELETE", path, { key }), 200), { message: "Submission deleted", submissionId: doomed.submissionId });
    expectError(await f.call("GET", path, { key }), 404, "Submission not found");
    expectError(await f.call("DELETE", path, { key }), 404, "Submission not found");
    expectError(await f.call("PATCH", path, { key, json: { status: "completed" } }), 404, "Submission not found");
    const page = await listPage(f, key);
    assert.is(page.total, 1);
    assert.equal(page.items, [kept]);
  });

  // ---- export -----------------------------------------------------------------------------

  const exportOf = async (key: string, query = "") => {
    const reply = await f.call("GET", `/api/submission/export${query === "" ? "" : `?${query}`}`, { key });
    assert.is(reply.status, 200, reply.text);
    return reply;
  };

  t("export: CSV of every match in the list's order: a header of the fields and data keys, a file name", async () => {
    const { key, rows } = await seededAccount(f);
    const reply = await exportOf(key, "status=pending&orderBy=created_at");
    assert.is(reply.headers.get("content-type"), "text/csv; charset=utf-8; header=present");
    assert.match(reply.headers.get("content-disposition") ?? "", /^attachment; filename="submissions-\d{8}T\d{6}Z\.csv"$/);
    assert.is(reply.headers.get("cache-control"), "no-store");
    const table = await collect(readCsvRows(oneChunk(reply.text)));
    assert.equal(table[0], {
      line: 1, cells: ["submissionId", "popupId", "domain", "userAgent", "device", "status", "createdAt", "data.email", "data.index"],
    });
    const pending = rows.filter((row) => row.status === "pending");
    assert.equal(table.slice(1).map((row) => ("cells" in row ? row.cells[0] : row.error)), ordered(pending, "asc"));
    const first = rows.find((row) => row.submissionId === ordered(pending, "asc")[0])!;
    assert.equal(table[1], {
      line: 2,
      cells: [first.submissionId, first.popupId, first.domain, first.userAgent, first.device, first.status, first.createdAt, first.data.email as string, String(first.data.index)],
    });
    assert.ok(reply.text.endsWith("\r\n"));
    // the default order is the list's: newest first; nothing matches: only the header
    const all = await collect(readCsvRows(oneChunk((await exportOf(key)).text)));
    assert.equal(all.slice(1).map((row) => ("cells" in row ? row.cells[0] : "")), ordered(rows, "desc"));
    assert.is((await exportOf(key, "popupId=nothing")).text, "submissionId,popupId,domain,userAgent,device,status,createdAt\r\n");
  });

  t("export: NDJSON is every submission exactly, one per line, across many pages and with every filter", async () => {
    const { key, accountId } = await f.account();
    const many = Array.from({ length: 2345 }, (_, i): Submission => ({
      submissionId: crypto.randomUUID(),
      popupId: `popup_${i % 3}`,
      data: { i, text: "Jöhn \"Q\" 😀\n", list: [i, null] },
      domain: "example.com",
      userAgent: "agent",
      device: DEVICES[i % 3]!,
      status: i % 2 ? "completed" : "pending",
      createdAt: new Date(BASE_TIME + Math.floor(i / 3)).toISOString(), // three rows per millisecond
    }));
    assert.is(await f.store.importSubmissions(accountId, many), many.length);
    const lines = (query: string) => exportOf(key, `format=ndjson${query}`).then((reply) => {
      assert.is(reply.headers.get("content-type"), "application/x-ndjson; charset=utf-8");
      assert.ok(reply.text === "" || reply.text.endsWith("\n"));
      return reply.text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Submission);
    });
    const byId = new Map(many.map((row) => [row.submissionId, row]));
    const everything = await lines("");
    assert.equal(everything.map((s) => s.submissionId), ordered(many, "desc"));
    for (const submission of everything) assert.equal(submission, byId.get(submission.submissionId));
    const after = new Date(BASE_TIME + 100).toISOString();
    const filtered = await lines(`&orderBy=created_at&popupId=popup_1&status=completed&createdAfter=${encodeURIComponent(after)}`);
    const expected = many.filter((r) => r.popupId === "popup_1" && r.status === "completed" && Date.parse(r.createdAt) > BASE_TIME + 100);
    assert.equal(filtered.map((s) => s.submissionId), ordered(expected, "asc"));
    assert.equal(await lines("&device=bot"), []);
  });

  t("export: a list page's nextCursor exports every match after that page; a cursor for other filters or order is 400", async () => {
    const { key, rows } = await seededAccount(f);
    const exported = async (query: string) => ids((await exportOf(key, `format=ndjson&${query}`)).text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Submission));
    for (const [filter, keep] of [["", () => true], ["&status=pending", (row: Submission) => row.status === "pending"]] as const) {
      for (const orderBy of ["created_at", "created_at_desc"] as const) {
        const expected = ordered(rows.filter(keep), orderBy === "created_at" ? "asc" : "desc");
        const page = await listPage(f, key, `orderBy=${orderBy}&limit=3${filter}`);
        assert.equal(await exported(`orderBy=${orderBy}${filter}&cursor=${page.nextCursor!}`), expected.slice(3), `${orderBy}${filter}`);
      }
    }
    const cursor = (await listPage(f, key, "limit=2&status=pending")).nextCursor!;
    const refused = async (query: string) => expectError(await f.call("GET", `/api/submission/export?${query}`, { key }), 400);
    assert.match(await refused(`cursor=${cursor}`), /^cursor was made for other filters or another orderBy/);
    assert.match(await refused(`status=pending&orderBy=created_at&cursor=${cursor}`), /^cursor was made for other filters or another orderBy/);
    assert.match(await refused(`status=pending&format=csv&cursor=${cursor}x`), /^cursor is not a cursor this API made/);
  });

  t("export: cells a spreadsheet would run as formulas are neutralised", async () => {
    const { key } = await f.account();
    const hostile = ["=1+2", "+1", "-1+1", "@SUM(A1)", "\tcmd", "\rcmd", "=HYPERLINK(\"http://evil.example\",\"x\")"];
    for (const [i, text] of hostile.entries()) {
      await create(key, { popupId: text, data: { [`f${i}`]: text, n: -5 }, userAgent: text });
    }
    const table = await collect(readCsvRows(oneChunk((await exportOf(key, "orderBy=created_at")).text)));
    for (const [i, row] of table.slice(1).entries()) {
      assert.ok("cells" in row);
      const cells = (row as { cells: string[] }).cells;
      // popupId, userAgent and the data cell (data.f0 ... data.f6, then data.n) start with a
      // quote; the number -5 is left alone
      for (const index of [1, 3, 7 + i]) assert.is(cells[index], `'${hostile[i]}`, `row ${i} cell ${index}`);
      assert.is(cells[14], "-5");
      for (const cell of cells) assert.not.match(cell, /^[=+@\t\r]|^-(?!5$)/, `row ${i}: ${JSON.stringify(cell)}`);
    }
  });

  t("export: a cell holding a semicolon is quoted, so a spreadsheet that splits on semicolons starts no cell inside it", async () => {
    const { key } = await f.account();
    // Excel where the list separator is ";" would read `x;=1+1;` unquoted as the cells x, =1+1 and the rest
    const hostile = "x;=cmd|' /C calc'!A0;";
    await create(key, { popupId: hostile, domain: "a;=1+1", userAgent: hostile, data: { [`k;=1`]: hostile, plain: "no semicolon" } });
    const text = (await exportOf(key, "")).text;
    const [header, record] = text.split("\r\n");
    assert.is(header, 'submissionId,popupId,domain,userAgent,device,status,createdAt,"data.k;=1",data.plain');
    const quoted = `"${hostile}"`;
    assert.ok(record!.includes(`,${quoted},"a;=1+1",${quoted},`), record);
    assert.ok(record!.endsWith(`,${quoted},no semicolon`), record);
    // and every cell reads back as it was written
    const table = await collect(readCsvRows(oneChunk(text)));
    const cells = (table[1] as { cells: string[] }).cells;
    assert.equal([cells[1], cells[2], cells[3], cells[7]], [hostile, "a;=1+1", hostile, hostile]);
  });

  t("export: query values outside their constraint are 400 naming the parameter; limit and offset are ignored", async () => {
    const { key, rows } = await seededAccount(f);
    const bad: [string, string][] = [
      ["format=xml", "format"], ["format=", "format"], ["format=CSV", "format"], ["format=csv&format=ndjson", "format"],
      ["status=done", "status"], ["orderBy=created", "orderBy"], ["createdAfter=yesterday", "createdAfter"],
      [`popupId=${"p".repeat(257)}`, "popupId"], ["device=", "device"],
    ];
    for (const [query, parameter] of bad) {
      const message = expectError(await f.call("GET", `/api/submission/export?${query}`, { key }), 400);
      assert.ok(message.includes(parameter), `${query}: ${message}`);
    }
    const text = (await exportOf(key, "format=ndjson&limit=2&offset=5&page=3")).text;
    assert.is(text.split("\n").filter(Boolean).length, rows.length);
  });

  t("export: CSV of more than 1000 distinct data keys is 400 pointing to NDJSON, which works", async () => {
    const { key, accountId } = await f.account();
    const wide = Array.from({ length: 11 }, (_, i): Submission => ({
      ...seedRows()[0]!, submissionId: crypto.randomUUID(), popupId: `wide_${i}`, data: fieldsObject(100, `k${i}_`),
    }));
    await f.store.importSubmissions(accountId, wide);
    expectError(await f.call("GET", "/api/submission/export", { key }), 400, /more than 1000 distinct data keys.*format=ndjson.*popupId/);
    assert.is((await exportOf(key, "format=ndjson")).text.split("\n").filter(Boolean).length, 11);
    // one popup's submissions have their own 100 keys: CSV works
    const narrowed = await exportOf(key, "popupId=wide_3");
    assert.ok(narrowed.text.startsWith("submissionId,popupId,domain,userAgent,device,status,createdAt,data.k3_0,data.k3_1,data.k3_10,"), narrowed.text.slice(0, 100));
  });

  t("export: another account's submissions never appear", async () => {
    const { key } = await seededAccount(f);
    const other = await f.account();
    await create(other.key, { popupId: "popup_a", data: { email: "other@example.com" } });
    const text = (await exportOf(key, "format=ndjson")).text;
    assert.not.ok(text.includes("other@example.com"));
    assert.is((await exportOf(other.key, "format=ndjson")).text.split("\n").filter(Boolean).length, 1);
  });

  // ---- OpenAPI ----------------------------------------------------------------------------

  t("openapi.json: served without a key; one operation per route", async () => {
    const reply = await f.call("GET", "/api/openapi.json");
    const doc = expectJson(reply, 200) as { openapi: string; paths: Record<string, object> };
    assert.is(doc.openapi, "3.1.0");
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    assert.equal(operations.sort(), ROUTES.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`).sort());
    // a key, even a bad one, changes nothing
    assert.is((await f.call("GET", "/api/openapi.json", { key: "nonsense" })).text, reply.text);
  });

  // ---- routing ----------------------------------------------------------------------------

  t("routing: a wrong method on a known path is 405 with an Allow header", async () => {
    const { key } = await f.account();
    const submission = await create(key);
    const cases: [method: string, path: string, allowed: string[]][] = [
      ["PUT", "/api/submission", ["GET", "OPTIONS", "POST"]],
      ["DELETE", "/api/submission", ["GET", "OPTIONS", "POST"]],
      ["PATCH", "/api/submission", ["GET", "OPTIONS", "POST"]],
      ["OPTIONS", `/api/submission/${submission.submissionId}`, ["DELETE", "GET", "PATCH"]],
      ["POST", `/api/submission/${submission.submissionId}`, ["DELETE", "GET", "PATCH"]],
      ["PUT", `/api/submission/${submission.submissionId}`, ["DELETE", "GET", "PATCH"]],
    ];
    for (const [method, path, allowed] of cases) {
      const withBody = method === "PUT" || method === "POST" || method === "PATCH";
      const reply = await f.call(method, path, withBody ? { key, json: { status: "completed" } } : { key });
      expectError(reply, 405);
      const allow = (reply.headers.get("allow") ?? "").split(",").map((m) => m.trim()).filter(Boolean).sort();
      assert.equal(allow, allowed, `${method} ${path}`);
    }
    assert.equal(expectJson(await f.call("GET", `/api/submission/${submission.submissionId}`, { key }), 200), submission);
    assert.is(await totalOf(f, key), 1);
  });

  t("routing: an unknown route is 404", async () => {
    const { key } = await f.account();
    for (const path of ["/api/submissions", "/api/nothing", "/", "/submission", "/api", "/api/submission/a/b"]) {
      expectError(await f.call("GET", path, { key }), 404);
      expectError(await f.call("GET", path), 404);
    }
  });

  // ---- log ----------------------------------------------------------------------------------

  t("log: one request entry per request with its id, method, path, route pattern, status and duration", async () => {
    const { key } = await f.account();
    const submission = await create(key);
    const requests: [method: string, path: string, options: CallOptions, status: number, route: string][] = [
      ["GET", `/api/submission?limit=2&${QUERY_MARKER}=1`, { key }, 200, "/api/submission"],
      ["POST", "/api/submission", { key, json: { popupId: "p", data: { secret: BODY_MARKER } } }, 201, "/api/submission"],
      ["PATCH", `/api/submission/${submission.submissionId}`, { key, json: { status: "completed" } }, 200, "/api/submission/:submissionId"],
      ["GET", `/api/submission/${MISSING_ID}`, { key }, 404, "/api/submission/:submissionId"],
      ["GET", "/api/submission", {}, 401, "/api/submission"],
      ["PUT", "/api/submission", { key }, 405, "/api/submission"],
      ["POST", "/api/submission", { key, rawJson: `{"popupId":"${BODY_MARKER}"` }, 400, "/api/submission"],
    ];
    for (const [method, path, options, status, route] of requests) {
      const before = f.log.filter((entry) => entry.type === "request").length;
      const reply = await f.call(method, path, options);
      assert.is(reply.status, status, `${method} ${path}`);
      const entries = f.log.filter((entry) => entry.type === "request");
      assert.is(entries.length, before + 1, `${method} ${path} logged ${entries.length - before} entries`);
      const entry = entries.at(-1)!;
      assert.equal(Object.keys(entry).sort(), ["durationMs", "method", "path", "requestId", "route", "status", "type"]);
      assert.equal(
        { ...entry, durationMs: 0, requestId: "" },
        { type: "request", requestId: "", method, path: path.split("?")[0]!, route, status, durationMs: 0 },
      );
      assert.is(entry.requestId, reply.headers.get("x-request-id"));
      assert.type(entry.durationMs, "number");
      assert.ok(entry.durationMs >= 0 && Number.isFinite(entry.durationMs));
    }
  });

  t("log: a key sent in the path by mistake is left out of the entry's path", async () => {
    const { key } = await f.account();
    const publishable = (await f.site(["shop.example.com"])).publishableKey;
    for (const [path, logged] of [
      [`/api/submission/${key}`, "/api/submission/[API key]"],
      [`/api/no-such/x${publishable}.json`, "/api/no-such/x[API key].json"],
    ]) {
      assert.is((await f.call("GET", path!, { key })).status, 404);
      assert.is(f.log.findLast((entry): entry is RequestLogEntry => entry.type === "request")!.path, logged);
    }
  });

  // Runs last: every entry of every request above.
  t("log: no entry ever holds an API key, a query string or a body", () => {
    assert.ok(f.log.length > 50, "the suite logged its requests");
    assert.ok(f.keys.length > 10);
    for (const entry of f.log) {
      const text = describeLogEntry(entry);
      for (const key of f.keys) assert.not.ok(text.includes(key), `log entry holds an API key: ${text}`);
      assert.not.match(text, /fs_(sk|pk)_/);
      assert.not.ok(text.includes(QUERY_MARKER), `log entry holds a query string: ${text}`);
      assert.not.ok(text.includes(BODY_MARKER), `log entry holds a body: ${text}`);
      if (entry.type === "request") assert.not.ok(entry.path.includes("?"));
    }
  });

  t.run();
}

function exportCancelSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: export cancelled`);

  t("export: a client that stops reading stops the walk through the store", async () => {
    let rowsRead = 0;
    let pagesInFlight = 0;
    const counted = async <Page extends unknown[] | { rows: number }>(read: Promise<Page>): Promise<Page> => {
      pagesInFlight++;
      try {
        const page = await read;
        rowsRead += Array.isArray(page) ? page.length : page.rows;
        return page;
      } finally {
        pagesInFlight--;
      }
    };
    const f = await mount(start, createStore, {
      wrapStore: (store) => ({
        ...store,
        walkSubmissions: (accountId, walk) => counted(store.walkSubmissions(accountId, walk)),
        walkSubmissionsAsJson: (accountId, walk) => counted(store.walkSubmissionsAsJson(accountId, walk)),
        walkSubmissionsAsNdjson: (accountId, walk) => counted(store.walkSubmissionsAsNdjson(accountId, walk)),
      }),
    });
    try {
      const { key, accountId } = await f.account();
      // 40,000 rows of about 1 KB: 40 MB, far more than socket buffers hold
      const total = 40_000;
      const filler = "x".repeat(1000);
      for (let batch = 0; batch < total / 1000; batch++) {
        await f.store.importSubmissions(accountId, Array.from({ length: 1000 }, (_, i): Submission => ({
          ...seedRows()[0]!, submissionId: crypto.randomUUID(), data: { filler, i }, createdAt: new Date(BASE_TIME + batch * 1000 + i).toISOString(),
        })));
      }
      const response = await f.send("GET", "/api/submission/export?format=ndjson", { key });
      assert.is(response.status, 200);
      const reader = response.body!.getReader();
      const first = await reader.read();
      assert.ok(first.value && first.value.byteLength > 0);
      await reader.cancel();
      // Whatever was in flight settles (a page read that takes long under load is waited for,
      // not mistaken for the end); after that, no page is read any more.
      const settled = async () => {
        for (let before = -1; before !== rowsRead || pagesInFlight > 0; ) {
          before = rowsRead;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        return rowsRead;
      };
      const afterCancel = await settled();
      assert.ok(afterCancel < total / 2, `${afterCancel} of ${total} rows were read after the client stopped`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.is(rowsRead, afterCancel);
    } finally {
      await f.stop();
    }
  });

  t.run();
}

function basePathSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: basePath`);
  let f: Fixture;
  t.before(async () => {
    f = await mount(start, createStore, { basePath: "/forms" });
  });
  // `f` is unset when `before` failed: let that error be the one reported.
  t.after(async () => {
    await (f as Fixture | undefined)?.stop();
  });

  t("basePath: the API is served under /forms", async () => {
    const { key } = await f.account();
    const reply = await f.call("POST", "/api/submission", { key, json: { popupId: "p", data: { a: 1 } } });
    const submission = expectSubmission(expectJson(reply, 201));
    assert.is(reply.headers.get("location"), `/forms/api/submission/${submission.submissionId}`);
    assert.equal(expectJson(await f.call("GET", `/api/submission/${submission.submissionId}`, { key }), 200), submission);
    assert.equal((await listPage(f, key)).items, [submission]);
    const log = f.log.filter((entry) => entry.type === "request").at(-1);
    assert.equal(log && log.type === "request" ? log.path : undefined, "/forms/api/submission");
  });

  t("basePath: /api outside the base path is 404", async () => {
    const { key } = await f.account();
    const submission = expectSubmission(
      expectJson(await f.call("POST", "/api/submission", { key, json: { popupId: "p", data: { a: 1 } } }), 201),
    );
    const outside = (method: string, path: string, options: CallOptions = {}) =>
      f.call(method, path, { ...options, outsideBasePath: true });
    expectError(await outside("GET", "/api/submission", { key }), 404);
    expectError(await outside("GET", `/api/submission/${submission.submissionId}`, { key }), 404);
    expectError(await outside("POST", "/api/submission", { key, json: { popupId: "p", data: { a: 1 } } }), 404);
    expectError(await outside("DELETE", `/api/submission/${submission.submissionId}`, { key }), 404);
    assert.is(await totalOf(f, key), 1);
  });

  t.run();
}

function failingStoreSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: store failure`);
  const failure = new Error("database exploded: SQLITE_IOERR at /var/lib/formsink/formsink.db");
  let f: Fixture;
  t.before(async () => {
    f = await mount(start, createStore, {
      wrapStore: (store) => ({
        ...store,
        listSubmissions: async () => {
          throw failure;
        },
        listSubmissionsAsJson: async () => {
          throw failure;
        },
        insertSubmission: async () => {
          throw failure;
        },
        getSubmission: async () => {
          throw failure;
        },
        getSubmissionAsJson: async () => {
          throw failure;
        },
        setSubmissionStatus: async () => {
          throw failure;
        },
        deleteSubmission: async () => {
          throw failure;
        },
        walkSubmissions: async () => {
          throw failure;
        },
        walkSubmissionsAsJson: async () => {
          throw failure;
        },
        walkSubmissionsAsNdjson: async () => {
          throw failure;
        },
        listDataKeys: async () => {
          throw failure;
        },
      }),
    });
  });
  // `f` is unset when `before` failed: let that error be the one reported.
  t.after(async () => {
    await (f as Fixture | undefined)?.stop();
  });

  t("a store that throws is 500 'Internal server error'; the error goes to the log only", async () => {
    const { key } = await f.account();
    for (const [method, path, options] of [
      ["GET", "/api/submission", {}],
      ["POST", "/api/submission", { json: { popupId: "p", data: { a: BODY_MARKER } } }],
      ["GET", `/api/submission/${MISSING_ID}`, {}],
      ["PATCH", `/api/submission/${MISSING_ID}`, { json: { status: "completed" } }],
      ["DELETE", `/api/submission/${MISSING_ID}`, {}],
      ["GET", "/api/submission/export", {}],
      ["GET", "/api/submission/export?format=ndjson", {}],
    ] as [string, string, CallOptions][]) {
      const errorsBefore = f.log.filter((entry) => entry.type === "error").length;
      const reply = await f.call(method, path, { ...options, key });
      expectError(reply, 500, "Internal server error");
      assert.is(reply.text, '{"message":"Internal server error"}');
      assert.not.ok(reply.text.includes("exploded") || reply.text.includes("SQLITE"), reply.text);

      const errors = f.log.filter((entry) => entry.type === "error");
      assert.is(errors.length, errorsBefore + 1, `${method} ${path}`);
      const logged = errors.at(-1)!;
      assert.is(logged.type === "error" ? logged.error : undefined, failure);
      assert.equal({ method: logged.method, path: logged.path }, { method, path: path.split("?")[0] });
      const request = f.log.at(-1)!;
      assert.equal(request.type === "request" ? [request.method, request.path, request.status] : [], [method, path.split("?")[0], 500]);
    }
    for (const entry of f.log) {
      const text = describeLogEntry(entry);
      assert.not.ok(text.includes(key), `log entry holds an API key: ${text}`);
      assert.not.ok(text.includes(BODY_MARKER), `log entry holds a body: ${text}`);
    }
  });

  t.run();
}

function healthSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: health`);
  const mounted: Fixture[] = [];
  const withStore = async (wrapStore?: (store: CompleteStore) => SubmissionStore) => {
    const f = await mount(start, createStore, { wrapStore, options: { healthTimeoutMs: 100 } });
    mounted.push(f);
    return f;
  };
  t.after.each(async () => {
    for (const f of mounted.splice(0)) await f.stop();
  });
  const expectUnavailable = (reply: Reply, message: RegExp) => {
    assert.equal(expectJson(reply, 503), { status: "unavailable", message: (reply.json as { message: string }).message });
    assert.match((reply.json as { message: string }).message, message);
    assert.is(reply.headers.get("cache-control"), "no-store");
  };

  t("GET /api/health needs no key: 200 {status: ok}, never cached", async () => {
    const f = await withStore();
    const reply = await f.call("GET", "/api/health");
    assert.equal(expectJson(reply, 200), { status: "ok" });
    assert.is(reply.headers.get("cache-control"), "no-store");
    assert.is((await f.call("POST", "/api/health")).status, 405);
  });

  t("a store that fails its ping is 503 unavailable, without the store's error text", async () => {
    const f = await withStore((store) => ({
      ...store,
      ping: async () => {
        throw new Error("SQLITE_IOERR at /var/lib/formsink/formsink.db");
      },
    }));
    const reply = await f.call("GET", "/api/health");
    expectUnavailable(reply, /^the store failed a trivial query$/);
    assert.not.match(reply.text, /SQLITE|\/var\//);
  });

  t("a store that never answers is 503 once the health timeout has passed, not a hung request", async () => {
    const f = await withStore((store) => ({ ...store, ping: () => new Promise<void>(() => {}) }));
    expectUnavailable(await f.call("GET", "/api/health"), /^the store did not answer within 100 ms$/);
  });

  t("a store without ping is checked with a read: 200 when reads work, 503 when they fail", async () => {
    const withoutPing = (store: CompleteStore, getSubmission = store.getSubmission.bind(store)): SubmissionStore => {
      const { ping: _ping, ...rest } = store;
      return { ...rest, getSubmission };
    };
    const healthy = await withStore((store) => withoutPing(store));
    assert.equal(expectJson(await healthy.call("GET", "/api/health"), 200), { status: "ok" });
    const broken = await withStore((store) => withoutPing(store, async () => {
      throw new Error("no connection");
    }));
    expectUnavailable(await broken.call("GET", "/api/health"), /^the store failed a trivial query$/);
  });

  t.run();
}

function requestIdSuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>): void {
  const t = suite(`${target}: request ids`);
  let f: Fixture;
  t.before(async () => {
    f = await mount(start, createStore);
  });
  // `f` is unset when `before` failed: let that error be the one reported.
  t.after(async () => {
    await (f as Fixture | undefined)?.stop();
  });
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const lastRequestEntry = () => f.log.findLast((entry): entry is RequestLogEntry => entry.type === "request")!;

  t("a plausible x-request-id is echoed on every answer, errors included, and is in the log entry", async () => {
    const { key } = await f.account();
    for (const [method, path, options, status] of [
      ["GET", "/api/submission", { key }, 200],
      ["GET", "/api/submission", {}, 401],
      ["GET", `/api/submission/${MISSING_ID}`, { key }, 404],
      ["POST", "/api/submission", { key, rawJson: "{" }, 400],
      ["PUT", "/api/submission", { key }, 405],
      ["GET", "/nowhere", {}, 404],
      ["GET", "/api/health", {}, 200],
    ] as [string, string, CallOptions, number][]) {
      const id = `req-${method}-${status}.a_b:c/d~${crypto.randomUUID()}`;
      const reply = await f.call(method, path, { ...options, headers: { "x-request-id": id } });
      assert.is(reply.status, status, `${method} ${path}`);
      assert.is(reply.headers.get("x-request-id"), id, `${method} ${path}`);
      assert.is(lastRequestEntry().requestId, id);
    }
  });

  t("without one, or with one that is too long or not visible ASCII, each answer gets a fresh UUID", async () => {
    const seen = new Set<string>();
    for (const given of [undefined, "", "has space", "x".repeat(129), "caf\u00e9", "tab\there"]) {
      const reply = await f.call("GET", "/api/health", given === undefined ? {} : { headers: { "x-request-id": given } });
      const id = reply.headers.get("x-request-id") ?? "";
      assert.match(id, UUID_V4, JSON.stringify(given));
      assert.is(lastRequestEntry().requestId, id);
      seen.add(id);
    }
    assert.is(seen.size, 6);
    assert.is((await f.call("GET", "/api/health", { headers: { "x-request-id": "x".repeat(128) } })).headers.get("x-request-id"), "x".repeat(128));
  });

  t("the log entry names the route's pattern, not the raw path", async () => {
    const { key } = await f.account();
    await f.call("GET", `/api/submission/${MISSING_ID}`, { key });
    assert.equal([lastRequestEntry().route, lastRequestEntry().path], ["/api/submission/:submissionId", `/api/submission/${MISSING_ID}`]);
    await f.call("GET", "/nowhere");
    assert.is(lastRequestEntry().route, undefined);
  });

  t.run();
}

/** Everything an entry could leak, as text: Errors do not survive JSON.stringify. */
function describeLogEntry(entry: LogEntry): string {
  return JSON.stringify(entry, (_key, value: unknown) =>
    value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value,
  );
}
