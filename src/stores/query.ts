/** Query semantics in plain TypeScript, for stores that filter in memory. */
import type { SubmissionCursor, SubmissionFilter } from "../store.ts";
import type { Submission } from "../submission.ts";

export function matchesFilter(submission: Submission, filter: SubmissionFilter): boolean {
  if (filter.popupId !== undefined && submission.popupId !== filter.popupId) return false;
  if (filter.domain !== undefined && submission.domain !== filter.domain) return false;
  if (filter.device !== undefined && submission.device !== filter.device) return false;
  if (filter.status !== undefined && submission.status !== filter.status) return false;
  const created = Date.parse(submission.createdAt);
  if (filter.createdAfter !== undefined && !(created > filter.createdAfter)) return false;
  if (filter.createdBefore !== undefined && !(created < filter.createdBefore)) return false;
  return true;
}

/** Ascending by creation time, ties broken by id: the one total order of every list. */
export function compareSubmissions(a: Submission, b: Submission): number {
  const byTime = Date.parse(a.createdAt) - Date.parse(b.createdAt);
  if (byTime !== 0) return byTime;
  return a.submissionId < b.submissionId ? -1 : a.submissionId > b.submissionId ? 1 : 0;
}

/** True when `submission` comes after `cursor` in the list order `order`. */
export function isAfter(submission: Submission, cursor: SubmissionCursor, order: "asc" | "desc"): boolean {
  const byTime = Date.parse(submission.createdAt) - cursor.createdAt;
  const byId = submission.submissionId < cursor.submissionId ? -1 : submission.submissionId > cursor.submissionId ? 1 : 0;
  return (order === "asc" ? 1 : -1) * (byTime || byId) > 0;
}

/**
 * Text order by Unicode code point, which is SQLite's (UTF-8 bytes compare in code point
 * order). JavaScript's `<` compares UTF-16 units instead, which puts characters past U+FFFF
 * (surrogate pairs) before U+E000..U+FFFF.
 */
export function compareByCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000; // a surrogate: above every BMP unit
  return unit >= 0xe000 ? unit - 0x800 : unit;
}
