/**
 * Lists and walks answered from an account's sorted lists, never by a scan: the query picks
 * the lists (all rows, or the tuples its equality fields match), each narrowed to a span by
 * binary searches for the date bounds and the walk cursor. The total is the sum of the spans;
 * a page is a k-way merge of them, started at a deep offset by a binary search over the
 * list order instead of by stepping past every row before it.
 */
import type { SubmissionCursor, SubmissionFilter } from "../../store.ts";
import type { AccountRows } from "./account-rows.ts";
import type { SortedSlots } from "./sorted-slots.ts";
import { TupleIndex } from "./tuples.ts";

type Order = "asc" | "desc";

/** The positions [start, end) of one list that match the query. */
interface Span {
  rows: SortedSlots;
  start: number;
  end: number;
}

/** Below this many rows skipped per span, stepping through a merge beats seeking. */
const STEPS_PER_SPAN_BEFORE_SEEKING = 50;

export function spansOf(account: AccountRows, filter: SubmissionFilter, order: Order, after?: SubmissionCursor): Span[] {
  const lists = TupleIndex.isUnfiltered(filter) ? [account.all] : account.index.matching(filter).map((tuple) => tuple.rows);
  const spans: Span[] = [];
  for (const rows of lists) {
    let start = filter.createdAfter === undefined ? 0 : rows.countBefore({ time: filter.createdAfter, tieAfter: true });
    let end = filter.createdBefore === undefined ? rows.size : rows.countBefore({ time: filter.createdBefore, tieAfter: false });
    if (after !== undefined) {
      const cursor = { time: after.createdAt, id: after.submissionId };
      if (order === "asc") start = Math.max(start, rows.countBefore({ ...cursor, tieAfter: true }));
      else end = Math.min(end, rows.countBefore({ ...cursor, tieAfter: false }));
    }
    if (start < end) spans.push({ rows, start, end });
  }
  return spans;
}

export function totalOf(spans: readonly Span[]): number {
  let total = 0;
  for (const span of spans) total += span.end - span.start;
  return total;
}

/** The slots of the page: `limit` rows after skipping `offset`, in `order`. */
export function pageOf(account: AccountRows, spans: readonly Span[], order: Order, offset: number, limit: number): number[] {
  const total = totalOf(spans);
  if (offset >= total || limit <= 0) return [];
  const count = Math.min(limit, total - offset);
  // positions[i]: the next position to take from span i (walking down from end - 1 for desc)
  let positions = spans.map((span) => (order === "asc" ? span.start : span.end - 1));
  let skip = offset;
  if (spans.length === 1) {
    positions[0]! += order === "asc" ? offset : -offset;
    skip = 0;
  } else if (offset > STEPS_PER_SPAN_BEFORE_SEEKING * spans.length) {
    positions = seek(account, spans, order === "asc" ? offset : total - 1 - offset, order);
    skip = 0;
  }
  return merge(account, spans, positions, order, skip, count);
}

/**
 * Where each span's walk starts so that the merge begins at the `k`-th match in ascending
 * order: a binary search over all of the account's rows for the first row with more than `k`
 * matches at or before it, counting matches per span by binary search too.
 */
function seek(account: AccountRows, spans: readonly Span[], k: number, order: Order): number[] {
  const clamp = (span: Span, position: number) => Math.min(Math.max(position, span.start), span.end);
  const atOrBefore = (slot: number) => {
    const probe = account.probeAt(slot, true);
    let matches = 0;
    for (const span of spans) matches += clamp(span, span.rows.countBefore(probe)) - span.start;
    return matches;
  };
  let low = 0;
  let high = account.all.size - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (atOrBefore(account.all.at(middle)) > k) high = middle;
    else low = middle + 1;
  }
  const found = account.all.at(low);
  // asc starts at the found row; desc starts at it too, walking down (last position <= it)
  const probe = account.probeAt(found, order === "desc");
  return spans.map((span) => clamp(span, span.rows.countBefore(probe)) - (order === "desc" ? 1 : 0));
}

/** A k-way merge of the spans from `positions`: skips `skip` rows, then takes `count`. */
function merge(account: AccountRows, spans: readonly Span[], positions: number[], order: Order, skip: number, count: number): number[] {
  const direction = order === "asc" ? 1 : -1;
  const inSpan = (i: number) => positions[i]! >= spans[i]!.start && positions[i]! < spans[i]!.end;
  // a binary heap of span numbers, ordered by the row each would give next
  const heads: number[] = [];
  const headSlot: number[] = spans.map(() => -1);
  const before = (a: number, b: number) => direction * account.compare(headSlot[heads[a]!]!, headSlot[heads[b]!]!) < 0;
  const swap = (a: number, b: number) => ([heads[a], heads[b]] = [heads[b]!, heads[a]!]);
  const down = (from: number) => {
    for (let i = from; ; ) {
      const left = 2 * i + 1;
      let first = i;
      if (left < heads.length && before(left, first)) first = left;
      if (left + 1 < heads.length && before(left + 1, first)) first = left + 1;
      if (first === i) return;
      swap(i, first);
      i = first;
    }
  };
  for (let i = 0; i < spans.length; i++) {
    if (!inSpan(i)) continue;
    headSlot[i] = spans[i]!.rows.at(positions[i]!);
    heads.push(i);
  }
  for (let i = (heads.length >>> 1) - 1; i >= 0; i--) down(i);

  const page: number[] = [];
  while (page.length < count && heads.length > 0) {
    const span = heads[0]!;
    if (skip > 0) skip--;
    else page.push(headSlot[span]!);
    positions[span]! += direction;
    if (inSpan(span)) headSlot[span] = spans[span]!.rows.at(positions[span]!);
    else {
      const last = heads.pop()!;
      if (heads.length > 0) heads[0] = last;
    }
    if (heads.length > 0) down(0);
  }
  return page;
}
