/**
 * The memory store's walk of all rows for a plentiful filter (`plentifulPageOf`) against the
 * merge of the matching tuples' lists (`pageOf` over `spansOf`), which the conformance suite and
 * memory-indexes.test.ts check against a model: for random filters, orders, cursors, date
 * windows, offsets and limits over thousands of rows with skewed values (some plentiful only in
 * part of the time, so that walks give up), after status changes and deletes, both must give
 * the same page whenever the walk answers.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { seededRandom } from "../../bench/support/dataset.ts";
import type { SubmissionCursor, SubmissionFilter } from "../../src/store.ts";
import { AccountRows } from "../../src/stores/memory/account-rows.ts";
import { pageOf, plentifulPageOf, spansOf, totalOf } from "../../src/stores/memory/pages.ts";
import type { Device, Submission, SubmissionStatus } from "../../src/submission.ts";

const T0 = Date.UTC(2025, 3, 1);
const ROWS = 5000;
const POPUPS = Array.from({ length: 12 }, (_, i) => `popup_${i}`);
const DOMAINS = ["a.example", "b.example", "c.example", "d.example"];
const DEVICES: Device[] = ["desktop", "mobile", "tablet"];
const STATUSES: SubmissionStatus[] = ["pending", "completed"];

function makeRows(random: () => number): { rows: AccountRows; ids: string[]; times: number[] } {
  const rows = new AccountRows(["email"]);
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  const ids: string[] = [];
  const times: number[] = [];
  for (let i = 0; i < ROWS; i++) {
    // a few rows per millisecond (ties broken by id), times out of order
    const time = T0 + Math.floor(random() * ROWS * 0.4);
    const late = time > T0 + ROWS * 0.25;
    const submission: Submission = {
      submissionId: `s${Math.floor(random() * 1e9).toString(36)}-${i}`,
      // popup_0 a third of the rows, popup_11 only early on
      popupId: random() < 0.35 ? POPUPS[0]! : late ? pick(POPUPS.slice(0, 11)) : pick(POPUPS),
      data: { email: `u${i}@example.com` },
      domain: random() < 0.5 ? DOMAINS[0]! : pick(DOMAINS),
      userAgent: "agent",
      // tablets make up about a third of the rows, all of them early: plentiful, yet absent from the newest rows
      device: late ? pick(DEVICES.slice(0, 2)) : random() < 0.9 ? "tablet" : pick(DEVICES),
      status: random() < 0.7 ? "pending" : "completed",
      createdAt: new Date(time).toISOString(),
    };
    rows.insert(submission);
    ids.push(submission.submissionId);
    times.push(time);
  }
  return { rows, ids, times };
}

function randomFilter(random: () => number): SubmissionFilter {
  const filter: SubmissionFilter = {};
  const maybe = <T>(values: readonly T[], chance: number) => (random() < chance ? values[Math.floor(random() * values.length)] : undefined);
  const popupId = maybe(POPUPS.slice(0, 2), 0.2);
  const domain = maybe(DOMAINS.slice(0, 2), 0.3);
  const device = maybe(DEVICES, 0.4);
  const status = maybe(STATUSES, 0.6);
  if (popupId !== undefined) filter.popupId = popupId;
  if (domain !== undefined) filter.domain = domain;
  if (device !== undefined) filter.device = device;
  if (status !== undefined) filter.status = status;
  return filter;
}

test("a plentiful filter's walk gives the merge's page", () => {
  const random = seededRandom(13);
  const { rows, ids, times } = makeRows(random);
  const live = new Set(ids);
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  let walked = 0;
  let plentifulButMerged = 0;
  for (let round = 0; round < 4000; round++) {
    if (round % 500 === 499) {
      // move rows between tuples and free slots, which later rows reuse
      for (let i = 0; i < 100; i++) rows.setStatus(pick(ids), pick(STATUSES));
      for (let i = 0; i < 100; i++) {
        const id = pick(ids);
        if (live.delete(id)) rows.delete(id);
      }
    }
    const filter = randomFilter(random);
    if (random() < 0.3) {
      const from = T0 + Math.floor(random() * ROWS * 0.4);
      filter.createdAfter = from - 0.5;
      filter.createdBefore = from + Math.floor(random() * ROWS * 0.2);
    }
    const order = random() < 0.5 ? "asc" : "desc";
    const limit = pick([1, 10, 11, 101, 1000]);
    const offset = pick([0, 0, 0, 3, 250, 5000]);
    let after: SubmissionCursor | undefined;
    if (random() < 0.6) {
      const i = Math.floor(random() * ids.length);
      // a row's place (a deleted row's too), or a place between rows
      after = random() < 0.8 ? { createdAt: times[i]!, submissionId: ids[i]! } : { createdAt: times[i]! + 0.5, submissionId: "" };
    }
    const what = JSON.stringify({ filter, order, limit, offset, after });
    const merged = pageOf(rows, spansOf(rows, filter, order, after), order, offset, limit);
    const page = plentifulPageOf(rows, filter, order, offset, limit, after);
    if (page !== undefined) {
      walked++;
      assert.equal(page, merged, what);
    } else if (totalOf(spansOf(rows, { ...filter, createdAfter: undefined, createdBefore: undefined }, order)) * 4 >= rows.size && offset + limit <= 4096) {
      plentifulButMerged++;
    }
  }
  // both paths ran often enough for the comparison to mean something, and walks gave up
  assert.ok(walked > 1000, `walked ${walked}`);
  assert.ok(plentifulButMerged > 20, `gave up ${plentifulButMerged}`);
});

test.run();
