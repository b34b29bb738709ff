/**
 * The rows the store suites write and the reference model their answers are checked against,
 * written from the contract (filters, exclusive date bounds, order by createdAt then id,
 * total), independently of any store's own code.
 */
import { listSubmissionsAsJson, type SubmissionFilter, type SubmissionQuery, type SubmissionStore } from "../store.ts";
import type { Device, Submission, SubmissionStatus } from "../submission.ts";
import { assert } from "./assert.ts";

export const ACCOUNT = "acct-conformance-a";
export const OTHER_ACCOUNT = "acct-conformance-b";
export const T0 = Date.UTC(2025, 6, 12, 10, 30, 0);
export const POPUPS = ["popup_a", "popup_b", "popup_c"];
const DOMAINS = ["example.com", "shop.example.com"];
export const DEVICES: Device[] = ["desktop", "mobile", "tablet", "bot"];

/**
 * 36 rows with every filter value mixed, three pairs sharing a millisecond (so order among
 * them is decided by id), and created out of order. Ids are random v4 UUIDs: the tie-break is
 * by id text, whatever kind of UUID it is.
 */
export function seedRows(count = 36): Submission[] {
  return Array.from({ length: count }, (_, i): Submission => {
    const minute = i % 12 === 5 ? i - 1 : i; // rows 5, 17, 29 share a millisecond with 4, 16, 28
    return {
      submissionId: crypto.randomUUID(),
      popupId: POPUPS[i % 3]!,
      data: { email: `user${i}@example.com`, index: i },
      domain: DOMAINS[Math.floor(i / 3) % 2]!,
      userAgent: `agent ${i}`,
      device: DEVICES[i % 4]!,
      status: i % 5 < 2 ? "completed" : "pending",
      createdAt: new Date(T0 + minute * 60_000).toISOString(),
    };
  }).reverse();
}

/** The contract's filter, the plain way: every given field equal, dates exclusive. */
export function matchesReferenceFilter(row: Submission, filter: SubmissionFilter): boolean {
  const created = Date.parse(row.createdAt);
  return (
    (filter.popupId === undefined || row.popupId === filter.popupId) &&
    (filter.domain === undefined || row.domain === filter.domain) &&
    (filter.device === undefined || row.device === filter.device) &&
    (filter.status === undefined || row.status === filter.status) &&
    (filter.createdAfter === undefined || created > filter.createdAfter) &&
    (filter.createdBefore === undefined || created < filter.createdBefore)
  );
}

/** What a list must answer, computed the plain way from the rows an account holds. */
export function expectedPage(rows: readonly Submission[], query: SubmissionQuery): { ids: string[]; total: number } {
  const matching = rows.filter((row) => matchesReferenceFilter(row, query));
  matching.sort((a, b) => {
    const byTime = Date.parse(a.createdAt) - Date.parse(b.createdAt);
    const byId = a.submissionId < b.submissionId ? -1 : a.submissionId > b.submissionId ? 1 : 0;
    return (query.order === "asc" ? 1 : -1) * (byTime || byId);
  });
  return { ids: matching.slice(query.offset, query.offset + query.limit).map((r) => r.submissionId), total: matching.length };
}

export async function expectList(store: SubmissionStore, accountId: string, rows: readonly Submission[], query: SubmissionQuery) {
  const page = await store.listSubmissions(accountId, query);
  const expected = expectedPage(rows, query);
  const what = JSON.stringify(query);
  assert.equal(page.items.map((s) => s.submissionId), expected.ids, `items of ${what}`);
  assert.is(page.total, expected.total, `total of ${what}`);
  // the list route's answer: the same page and total as JSON texts (a store may read them another way)
  const texts = await listSubmissionsAsJson(store, accountId, query);
  assert.equal(texts.items, page.items.map((submission) => JSON.stringify(submission)), `items as JSON of ${what}`);
  assert.is(texts.total, expected.total, `total with the JSON of ${what}`);
  return page;
}

/** Every combination of the four equality filters, each absent or set to a value that occurs. */
export function equalityFilterCombinations(): SubmissionFilter[] {
  const choices = {
    popupId: [undefined, "popup_b"],
    domain: [undefined, "shop.example.com"],
    device: [undefined, "mobile"],
    status: [undefined, "completed"] as (SubmissionStatus | undefined)[],
  };
  const combinations: SubmissionFilter[] = [];
  for (const popupId of choices.popupId)
    for (const domain of choices.domain)
      for (const device of choices.device)
        for (const status of choices.status) combinations.push({ popupId, domain, device, status });
  return combinations.map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)));
}

/** Submissions whose every field and data value is something a CSV or a spreadsheet gets wrong. */
export function awkwardSubmissions(): Submission[] {
  const base = {
    popupId: "popup", domain: "example.com", userAgent: "Mozilla/5.0", device: "desktop" as const, status: "pending" as const,
  };
  const values = [
    "=1+2", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "'quoted", "''", "'=x", "-5", "5", "1e3", "true", "null", "false", "",
    " padded ", "[1]", "{}", '"quoted"', 'a "b" c', "a,b", "line\nbreak", "crlf\r\nbreak", "Jöhn 😀 中文", "\u2028", "-", "=",
    // control characters, which a store must not take for separators of its own
    "\x1e", "a\x1fb\x1ec",
  ];
  const submissions: Submission[] = values.map((text, i) => ({
    ...base,
    submissionId: `0193f5c2-7b8e-7cc1-9a1e-${String(i).padStart(12, "0")}`,
    popupId: text === "" ? "p" : text,
    domain: i % 2 ? text : "",
    userAgent: text,
    data: { text, [`key ${text}`.slice(0, 128)]: i },
    createdAt: new Date(Date.UTC(2025, 6, 12) + i).toISOString(),
  }));
  submissions.push({
    ...base,
    submissionId: "0193f5c2-7b8e-7cc1-9a1e-ffffffffffff",
    data: {
      n: -5, zero: 0, big: 9007199254740991, tiny: 5e-324, exp: 1e21, frac: -0.125, yes: true, no: false, nothing: null,
      list: [1, "two", null, { three: [3] }], object: { nested: { deep: "=x" } }, "data.inner": "dotted", "with,comma": "x", 'with"quote': "y",
    },
    createdAt: "2025-07-12T23:59:59.999Z",
  });
  submissions.push({ ...base, submissionId: "0193f5c2-7b8e-7cc1-9a1e-fffffffffffe", data: {}, status: "completed", device: "unknown", createdAt: "1970-01-01T00:00:00.000Z" });
  return submissions;
}

/**
 * 90 rows whose filter fields are correlated, as real accounts' are: `popup_done`'s rows are
 * all completed, `popup_here` never runs on `away.example.com`, two rows are bots, and most
 * rows are one popup's. Many filter combinations then match nothing or a handful, which a
 * store must answer as exactly as the plentiful ones. Times spread over 90 minutes, pairs
 * sharing a millisecond.
 */
export function correlatedRows(): Submission[] {
  return Array.from({ length: 90 }, (_, i): Submission => {
    const popupId = i % 9 === 0 ? "popup_done" : i % 9 === 1 ? "popup_here" : "popup_most";
    const minute = i % 10 === 3 ? i - 1 : i;
    return {
      submissionId: crypto.randomUUID(),
      popupId,
      data: { index: i },
      domain: popupId === "popup_here" || i % 4 !== 0 ? "example.com" : "away.example.com",
      userAgent: `agent ${i}`,
      device: i === 40 || i === 41 ? "bot" : i % 3 === 0 ? "mobile" : "desktop",
      status: popupId === "popup_done" || i % 5 === 0 ? "completed" : "pending",
      createdAt: new Date(T0 + minute * 60_000).toISOString(),
    };
  }).reverse();
}

/**
 * Every combination of the four equality filters over the values of `correlatedRows` (and one
 * value no row has), each field absent or set.
 */
export function correlatedFilterCombinations(): SubmissionFilter[] {
  const combinations: SubmissionFilter[] = [];
  for (const popupId of [undefined, "popup_done", "popup_here", "popup_most", "popup_none"])
    for (const domain of [undefined, "example.com", "away.example.com"])
      for (const device of [undefined, "desktop", "bot"])
        for (const status of [undefined, "pending", "completed"] as (SubmissionStatus | undefined)[])
          combinations.push(Object.fromEntries(Object.entries({ popupId, domain, device, status }).filter(([, v]) => v !== undefined)));
  return combinations;
}
