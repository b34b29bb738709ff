/**
 * Lists and walks answered from an account's sorted lists, never by a scan: the query picks
 * the lists (all rows, or the tuples its equality fields match), each narrowed to a span by
 * binary searches for the date bounds and the walk cursor. The total is the sum of the spans;
 * a page is a k-way merge of them, started at a deep offset by a binary search over the
 * list order instead of by stepping past every row before it. A filter that matches a large
 * share of the rows takes its page from a bounded walk of all rows instead (`plentifulPageOf`).
 */
import type { SubmissionCursor, SubmissionFilter } from "../../store.ts";
import type { AccountRows } from "./account-rows.ts";
import type { SortedSlots } from "./sorted-slots.ts";
import { type Tuple, TupleIndex } from "./tuples.ts";

type Order = "asc" | "desc";

/** The positions [start, end) of one list that match the query. */
interface Span {
  rows: SortedSlots;
  start: number;
  end: number;
}

/**
 * A filter whose tuples hold at least 1 / this of the account's rows is read by walking all of
 * them (`plentifulPageOf`): a walk then reads about this many rows per row it keeps.
 */
const READS_PER_MATCH_AT_MOST = 4;
/** A walk gives up (and the merge answers) after this many reads per row it has to find. */
const READS_PER_ROW_BEFORE_GIVING_UP = 16;
/** Slack on that cap, so that a short page is not given up on for a few unlucky rows. */
const READS_BEFORE_GIVING_UP = 256;
/** A walk finds at most this many rows (skipped and kept); deeper offsets seek in the merge. */
const WALKED_ROWS_AT_MOST = 4096;

/** Below this many rows skipped per span, stepping through a merge beats seeking. */
const STEPS_PER_SPAN_BEFORE_SEEKING = 50;

/** The tuples the filter's equality fields match; undefined without any (every row matches). */
export function tuplesOf(account: AccountRows, filter: SubmissionFilter): Tuple[] | undefined {
  return TupleIndex.isUnfiltered(filter) ? undefined : account.index.matching(filter);
}

/** `tuples`: the filter's, when the caller has them already. */
export function spansOf(account: AccountRows, filter: SubmissionFilter, order: Order, after?: SubmissionCursor, tuples = tuplesOf(account, filter)): Span[] {
  const spans: Span[] = [];
  const listCount = tuples === undefined ? 1 : tuples.length;
  for (let i = 0; i < listCount; i++) {
    const span = spanOf(tuples === undefined ? account.all : tuples[i]!.rows, filter, order, after);
    if (span.start < span.end) spans.push(span);
  }
  return spans;
}

/** The positions of `rows` inside the filter's date bounds and past the walk's cursor. */
function spanOf(rows: SortedSlots, filter: SubmissionFilter, order: Order, after?: SubmissionCursor): Span {
  let start = filter.createdAfter === undefined ? 0 : rows.countBefore({ time: filter.createdAfter, tieAfter: true });
  let end = filter.createdBefore === undefined ? rows.size : rows.countBefore({ time: filter.createdBefore, tieAfter: false });
  if (after !== undefined) {
    const cursor = { time: after.createdAt, id: after.submissionId };
    if (order === "asc") start = Math.max(start, rows.countBefore({ ...cursor, tieAfter: true }));
    else end = Math.min(end, rows.countBefore({ ...cursor, tieAfter: false }));
  }
  return { rows, start, end };
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
  let positions = startsOf(spans, order);
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

// bench/store.ts (list): TurboFan threw spansOf, pageOf and merge away after compiling them, at
// arrays that `map` had made: in optimized code `map` makes an array of another kind than the
// builtin does, whose map the code's feedback had never seen. The arrays of a page are filled
// by `push`, of one kind either way.
/** The position each span's walk starts at in `order`, before any offset. */
function startsOf(spans: readonly Span[], order: Order): number[] {
  const positions: number[] = [];
  for (const span of spans) positions.push(order === "asc" ? span.start : span.end - 1);
  return positions;
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
  const positions: number[] = [];
  for (const span of spans) positions.push(clamp(span, span.rows.countBefore(probe)) - (order === "desc" ? 1 : 0));
  return positions;
}

/** A k-way merge of the spans from `positions`: skips `skip` rows, then takes `count`. */
function merge(account: AccountRows, spans: readonly Span[], positions: number[], order: Order, skip: number, count: number): number[] {
  const direction = order === "asc" ? 1 : -1;
  const inSpan = (i: number) => positions[i]! >= spans[i]!.start && positions[i]! < spans[i]!.end;
  // a binary heap of span numbers, ordered by the row each would give next
  const heads: number[] = [];
  const headSlot: number[] = [];
  for (let i = 0; i < spans.length; i++) headSlot.push(-1);
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

/**
 * The page of a filter that matches a large share of the account's rows (many tuples, such as a
 * `status` alone), read by walking the list of all rows from the cursor or date bound and keeping
 * the rows whose tuple matches, as the SQL store walks its time index: the merge would first
 * narrow every matching tuple's list by binary searches and merge hundreds of lists for a page
 * of ten (bench/correlated.ts, the memory store's paging by cursor). Undefined where the merge
 * answers instead: no equality filter or a single tuple (one list is already exactly the
 * matches), matches too rare for a walk to find them soon, an offset too deep, or a walk that
 * found too few matches where it looked (the matches need not be spread evenly over time).
 * Gives what `pageOf(account, spansOf(account, filter, order, after), order, offset, limit)` gives;
 * `tuples`: the filter's, when the caller has them already.
 */
export function plentifulPageOf(
  account: AccountRows,
  filter: SubmissionFilter,
  order: Order,
  offset: number,
  limit: number,
  after?: SubmissionCursor,
  tuples = tuplesOf(account, filter),
): number[] | undefined {
  if (tuples === undefined || tuples.length < 2 || limit <= 0 || offset + limit > WALKED_ROWS_AT_MOST) return undefined;
  let matches = 0;
  for (const tuple of tuples) matches += tuple.rows.size;
  const all = account.all;
  if (matches * READS_PER_MATCH_AT_MOST < all.size) return undefined;
  const matching = new Uint8Array(account.index.tuples.length);
  for (const tuple of tuples) matching[tuple.number] = 1;

  const { start, end } = spanOf(all, filter, order, after);
  const wanted = offset + limit;
  const reads = Math.min(end - start, READS_PER_ROW_BEFORE_GIVING_UP * wanted + READS_BEFORE_GIVING_UP);
  const page: number[] = [];
  let skip = offset;
  const direction = order === "asc" ? 1 : -1;
  let position = order === "asc" ? start : end - 1;
  for (let read = 0; read < reads; read++, position += direction) {
    const slot = all.at(position);
    if (matching[account.tupleAt(slot)] === 0) continue;
    if (skip > 0) skip--;
    else if (page.push(slot) === limit) return page;
  }
  // every row in the bounds read: the page is complete, if short; else too few found in time
  return reads === end - start ? page : undefined;
}
