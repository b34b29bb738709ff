/**
 * The SQL that reads submissions: a list page and its total, a page of a walk (keyset paging),
 * and the distinct data keys, all with the same WHERE clause. Kept apart from the store so that
 * `test/stores/sql-schema.test.ts` can `EXPLAIN QUERY PLAN` these very statements.
 */
import type { SqlStatement, SqlValue } from "./driver.ts";
import { DAY_MS, EQUALITY_COLUMNS } from "./counting.ts";
import type { SubmissionCursor, SubmissionFilter, SubmissionQuery, SubmissionWalk } from "../../store.ts";
import {
  SUBMISSION_ARRAY, SUBMISSION_COLUMNS, SUBMISSION_CSV_PARTS, SUBMISSION_JSON_TIME_APART, SUBMISSION_JSON_TIME_APART_AS_STORED, SUBMISSION_LINE, SUBMISSION_LINE_AS_STORED,
} from "./submission-row.ts";

const EQUALITY_FIELDS = Object.keys(EQUALITY_COLUMNS) as (keyof typeof EQUALITY_COLUMNS)[];

/** A list's statements (`listStatements`). */
export interface ListStatements {
  /** What the statements' texts depend on: the same shape, the same texts (`statementTexts`), whatever the values. */
  shape: string;
  page: SqlStatement;
  count: SqlStatement;
  /** When the counts choose between a walk and a merge: the page read by the merge. */
  merge?: () => SqlStatement;
  /** Beside `merge`: the counts' choice, a WITH clause that `page` and `walkCount` read (`withChoice`). */
  choice?: () => SqlStatement;
  /** Beside `merge`: the total when the counts chose the walk, else NULL. */
  walkCount?: SqlStatement;
  /**
   * Beside `merge`: the walk as already chosen, which reads no counts (its total is `count`),
   * for a list whose walk found its page lately (`readLately`).
   */
  chosenWalk?: () => SqlStatement;
}

/**
 * A list page and its total. The page's rows, as arrays: SUBMISSION_COLUMNS (for
 * `rowToSubmission`), or `as` "json" the submission's JSON text with its time apart
 * (SUBMISSION_JSON_TIME_APART); "json as stored", the same with `data` as stored
 * (SUBMISSION_JSON_TIME_APART_AS_STORED).
 *
 * When the counts choose between a walk and a merge (`pageReading`), `page` is only the walk,
 * which reads rows only when the counts choose it (`choice`), and `merge` makes the page read
 * by merging the matching tuples (made only when it is read): the store reads the walk with
 * `walkCount`, the total only when the walk was chosen, and only when the walk was not chosen
 * or did not find the page (`walkFoundPage`) reads the merge with the total, so that both come
 * from one snapshot and a list whose counts choose the merge reads its total once. A walk
 * alone costs much less than a statement that holds both ways (`pageStatement`, or the merge
 * beside the walk with a LIMIT of 0, whose cursors SQLite still opens): bench/http.ts's list
 * (two filters whose matches are plentiful) needs this.
 *
 * Each choice the texts make from the query's values (the page's reading, the total's
 * counting) is made here once, handed to the statements and written into `shape`, the key
 * their texts are kept under: nothing else re-derives it.
 */
export function listStatements(accountId: string, query: SubmissionQuery, as: ListRows = "rows"): ListStatements {
  const select = LIST_SELECT[as];
  const bounds = { limit: query.limit, offset: query.offset };
  const reading = readingOf(query, bounds);
  const counting = countingOf(query);
  const shape = `list ${as} ${fieldsShape(query, query.order, bounds)} ${reading} ${countShape(counting)}`;
  const count = withFlags(countStatement(accountId, query, counting), { oneRow: true });
  if (reading === "walk or merge") {
    const page = withFlags(indexWalk(accountId, query, query.order, bounds, select, CHOSEN, MAX_WALK_ROWS_READ), { asArrays: true });
    const merge = () => withFlags(mergedPage(accountId, query, query.order, bounds, select), { asArrays: true });
    // bench/http.ts (list): most lists are read this way; a WITH clause of the choice made already (a constant) SQLite still materialized and read back.
    const chosenWalk = () => withFlags(indexWalk(accountId, query, query.order, bounds, select, undefined, MAX_WALK_ROWS_READ), { asArrays: true });
    const depth = bounds.offset + bounds.limit;
    if (counting === "counts") {
      // Undated, the total is a sum of the very counts the choice reads: one read of them for both (bench/http.ts, list).
      return {
        shape,
        page,
        count,
        merge,
        choice: () => {
          const paysWithTotal = walkPaysWithTotal(accountId, query, depth, MAX_WALK_ROWS);
          return lazy(() => `WITH walk_pays (pays, total) AS MATERIALIZED (${paysWithTotal.sql})`, paysWithTotal.args);
        },
        walkCount: UNDATED_WALK_COUNT,
        chosenWalk,
      };
    }
    return {
      shape,
      page,
      count,
      merge,
      choice: () => {
        const pays = walkPays(accountId, query, depth, MAX_WALK_ROWS);
        return lazy(() => `WITH walk_pays (pays) AS MATERIALIZED (SELECT ${pays.sql})`, pays.args);
      },
      walkCount: lazy(() => `SELECT CASE WHEN ${CHOSEN.sql} THEN (${count.sql}) END AS total`, count.args ?? [], { oneRow: true }),
      chosenWalk,
    };
  }
  return { shape, page: withFlags(pageStatement(accountId, query, query.order, bounds, select, reading), { asArrays: true }), count };
}

/** What each row of a list is (`listStatements`). */
export type ListRows = "rows" | "json" | "json as stored";

const LIST_SELECT: Record<ListRows, string> = {
  rows: SUBMISSION_COLUMNS,
  json: `${SUBMISSION_JSON_TIME_APART} AS submission`,
  "json as stored": `${SUBMISSION_JSON_TIME_APART_AS_STORED} AS submission`,
};

/**
 * The part of a statement's shape (`ListStatements`' `shape`, `WalkStatement`'s) that is not a
 * choice made from the query's values: its order and which fields and bounds it has. Beside it,
 * the shape holds each such choice (a page's reading, `readingOf`; a total's, `countingOf`),
 * made once and handed to the statements, which read the query's values only for their
 * arguments.
 */
function fieldsShape(filter: SubmissionFilter, order: "asc" | "desc", page: PageBounds): string {
  let fields = "";
  for (const field of EQUALITY_FIELDS) fields += filter[field] === undefined ? "-" : "=";
  const bounds = `${filter.createdAfter === undefined ? "-" : ">"}${filter.createdBefore === undefined ? "-" : "<"}${page.after === undefined ? "-" : "@"}`;
  return `${order} ${fields} ${bounds}`;
}

/**
 * Texts made once per shape of query (`ListStatements`' and `WalkStatement`'s `shape`) and
 * the part of its reading (`part`): building a list's text costs more than the rest of its JavaScript, and the driver
 * finds its prepared statement by the text, fastest when it is the very string it was given
 * before (bench/http.ts, list).
 */
export function statementTexts(maxKept = MAX_KEPT_TEXTS): (shape: string, part: string, statement: SqlStatement) => SqlStatement {
  const texts = new Map<string, string>();
  return (shape, part, statement) => {
    const key = `${shape} ${part}`;
    let sql = texts.get(key);
    if (sql === undefined) {
      if (texts.size >= maxKept) texts.clear();
      sql = statement.sql;
      texts.set(key, sql);
    }
    const kept: SqlStatement = { sql, args: statement.args };
    if (statement.asArrays) kept.asArrays = true;
    if (statement.oneRow) kept.oneRow = true;
    return kept;
  };
}

/** Texts kept per store by default; past this many, they start over (as the driver's prepared statements do). */
const MAX_KEPT_TEXTS = 512;

// bench/correlated.ts: a dated list over dozens of tuples read, before each merge, a walk that its
// counts never chose; and before each walk, the counts' choice, which chose it again.
/**
 * The lists read lately one way, so that the next list of the same shape and values is read
 * that way at once: a store keeps one for the lists whose page the merge read
 * (`ListStatements`' `merge`: the counts did not choose the walk, or it did not find the page),
 * read by the merge without the walk's statement before it, and one for the lists whose walk
 * found the page, read by the walk without the counts' choice (`chosenWalk`). Either gives the
 * same page and total whichever way the counts would choose: the merge reads any page, and a
 * walk that does not find its page (it reads a bounded number of rows) is followed by the
 * merge; the choice is only what a list costs. A list is read that way READ_REUSES times, then
 * the usual way again, so that counts that have come to choose otherwise are seen; a key that
 * two lists share costs one of them the other way, never a wrong page.
 */
export function readLately(maxKept = MAX_LATE_LISTS): { take(key: string): boolean; note(key: string): void } {
  // Each noted list's place in `readsLeft`; place 0 is no list's, and its count stays 0.
  const places = new Map<string, number>();
  const readsLeft = new Int32Array(maxKept + 1);
  return {
    // A list taken and one not taken run the same operations: the first list taken may come
    // long after the list path was compiled (bench/correlated.ts: in the suspects' rounds),
    // and V8 throws compiled code away at a branch it has never seen run. A list whose reads
    // are used up keeps its place, read as none left, until it is noted again or memory
    // starts over.
    take(key) {
      const place = places.get(key) ?? 0;
      const left = readsLeft[place]!;
      readsLeft[place] = Math.max(left - 1, 0);
      return left > 0;
    },
    note(key) {
      let place = places.get(key);
      if (place === undefined) {
        if (places.size >= maxKept) places.clear();
        place = places.size + 1;
        places.set(key, place);
      }
      readsLeft[place] = READ_REUSES;
    },
  };
}

// bench/correlated.ts, over HTTP: a key built by `+` or a template is a tree of string pieces,
// which a Map keeps whole; a noted key outlives young-generation collections, which copy the
// whole tree each time and then keep it in the old generation. `join` makes one flat string.
/** The key of a list in `readLately`: its shape (`ListStatements`') and the values its statements read. */
export function lateListKey(accountId: string, query: SubmissionQuery, shape: string): string {
  const { popupId, domain, device, status, createdAfter, createdBefore, offset, limit } = query;
  return [shape, accountId, String(popupId), String(domain), String(device), String(status), String(createdAfter), String(createdBefore), String(offset), String(limit)].join("\x1f");
}

/** Lists a store remembers in each `readLately`; past this many, it starts over. */
const MAX_LATE_LISTS = 4096;
/** Lists of one key read one way at once before one is read the usual way again. */
const READ_REUSES = 16;

/**
 * A statement whose text is made only when read: its arguments are made for every query, its
 * text only for a shape not seen yet (`statementTexts`). Never spread it: that reads the text.
 * A class, not an object literal with a getter, which V8 builds far more slowly.
 */
class LazyStatement implements SqlStatement {
  readonly #text: () => string;
  readonly args: readonly SqlValue[];
  readonly asArrays?: true;
  readonly oneRow?: true;

  constructor(text: () => string, args: readonly SqlValue[], flags: { asArrays?: true; oneRow?: true }) {
    this.#text = text;
    this.args = args;
    if (flags.asArrays) this.asArrays = true;
    if (flags.oneRow) this.oneRow = true;
  }

  get sql(): string {
    return this.#text();
  }
}

const NO_FLAGS = {};

function lazy(text: () => string, args: readonly SqlValue[], flags: { asArrays?: true; oneRow?: true } = NO_FLAGS): SqlStatement {
  return new LazyStatement(text, args, flags);
}

function withFlags(statement: SqlStatement, flags: { asArrays?: true; oneRow?: true }): SqlStatement {
  return lazy(() => statement.sql, statement.args ?? [], flags);
}

/** The counts' choice of a walk, as the WITH clause of `listStatements`' `choice` holds it. */
const CHOSEN = { sql: "(SELECT pays FROM walk_pays)", args: [] };
/** An undated list's `walkCount` (`listStatements`): the total its choice summed, when it chose the walk. */
const UNDATED_WALK_COUNT = lazy(() => "SELECT CASE WHEN pays THEN total END AS total FROM walk_pays", [], { oneRow: true });

/** `statement` with the WITH clause `choice` (of `listStatements`) in front, when given. */
export function withChoice(choice: SqlStatement | undefined, statement: SqlStatement): SqlStatement {
  if (choice === undefined) return statement;
  return lazy(() => `${choice.sql} ${statement.sql}`, argsOf(choice.args ?? [], statement.args ?? []), statement);
}

/**
 * True when a list's walk (`page` of `listStatements` with a `merge`) that read `rows` rows is
 * the page: a whole page, or the list's end by its total. Otherwise the walk stopped short
 * (the counts said it does not pay, or the matches lie past its bounded reach) and the merge
 * reads the page.
 */
export function walkFoundPage(query: SubmissionQuery, rows: number, total: number): boolean {
  return rows === query.limit || query.offset + rows >= total;
}

/** How a page is read: by skipping days (`daySkippingPage`), else as `pageReading` chooses. */
function readingOf(filter: SubmissionFilter, page: PageBounds): "days" | ReturnType<typeof pageReading> {
  return skipsDays(filter, page) ? "days" : pageReading(filter, page.offset + page.limit);
}

/** A deep offset without a cursor, a date range or two equality filters: `daySkippingPage` reads it. */
function skipsDays(filter: SubmissionFilter, page: PageBounds): boolean {
  return page.offset >= MIN_DAY_SKIP && page.after === undefined && equalityCount(filter) <= 1 && !isDated(filter);
}

/** A page of `select` by `reading` (`readingOf`). */
function pageStatement(
  accountId: string,
  filter: SubmissionFilter,
  order: "asc" | "desc",
  page: PageBounds,
  select: string,
  reading: ReturnType<typeof readingOf>,
): SqlStatement {
  if (reading === "days") return daySkippingPage(accountId, filter, order, page, select);
  if (reading === "index") return indexPage(accountId, filter, order, page, select);
  const deep = reading === "deep walk or merge";
  const depth = page.offset + page.limit;
  const pays = walkPays(accountId, filter, depth, deep ? undefined : MAX_WALK_ROWS);
  const chosen = { sql: "(SELECT pays FROM walk_pays)", args: [] };
  const walk = indexWalk(accountId, filter, order, page, select, chosen, deep ? undefined : MAX_WALK_ROWS_READ);
  // An unbounded walk finds the page whenever it runs (or the list's end, where the merge finds no more).
  const walkFound = deep ? chosen : { sql: "((SELECT pays FROM walk_pays) AND (SELECT COUNT(*) FROM walked) = ?)", args: [page.limit] };
  const merge = mergedPage(accountId, filter, order, page, select, walkFound);
  // The merge reads rows only when the walk was not chosen or did not find the page; either
  // side is in the list order (`walked` is kept in the order its rows were found).
  return lazy(
    () => `WITH walk_pays (pays) AS MATERIALIZED (SELECT ${pays.sql}), walked AS MATERIALIZED (${walk.sql})
          SELECT * FROM walked WHERE ${walkFound.sql} UNION ALL SELECT * FROM (${merge.sql})`,
    argsOf(pays.args, walk.args!, walkFound.args, merge.args!),
  );
}

interface PageBounds {
  limit: number;
  offset: number;
  after?: SubmissionCursor;
}

/**
 * An offset from which a list with at most one equality filter skips whole days by counts per
 * day (`daySkippingPage`) rather than stepping over each row: below it, stepping costs less
 * than reading the days.
 */
const MIN_DAY_SKIP = 1000;

/**
 * The account's counts per UTC day, as (day, n) in day order: every row has one status, so a
 * day's are the sum of its statuses' (migration 12).
 */
const ACCOUNT_DAYS = "SELECT day, SUM(n) AS n FROM submission_value_days WHERE account_id = ? AND field = 'status' GROUP BY day";

/**
 * A deep page (`offset=500000`) with at most one equality filter: SQLite's OFFSET steps over
 * every skipped entry of the index, as its B-trees keep no subtree counts. Instead, counts per
 * UTC day (the account's, `ACCOUNT_DAYS`, or the filter value's, migration 10) give the day the
 * offset falls in, counted from the end the list starts at, and how many matches the days
 * before it hold; the page is read from that day's boundary in the same index, skipping only
 * the rest of the offset. A day's rows all lie on one side of its boundary, ties of created_at
 * included, and the counts and the rows are read in one statement, so one snapshot: the page
 * is exactly the one OFFSET would give.
 */
function daySkippingPage(accountId: string, filter: SubmissionFilter, order: "asc" | "desc", page: PageBounds, select: string): SqlStatement {
  const ascending = order === "asc";
  const direction = ascending ? "ASC" : "DESC";
  const [field] = equalityFields(filter);
  const days = field === undefined ? [accountId] : [accountId, EQUALITY_COLUMNS[field], filter[field]!];
  const rows = field === undefined ? [accountId] : [accountId, filter[field]!];
  const text = () => {
    const days = field === undefined ? `(${ACCOUNT_DAYS})` : "submission_value_days WHERE account_id = ? AND field = ? AND value = ?";
    const rows = field === undefined
      ? "submissions WHERE account_id = ?"
      : `submissions INDEXED BY ${walkIndex(filter).index} WHERE account_id = ? AND ${EQUALITY_COLUMNS[field]} = ?`;
    // The day the offset falls in is the last, in the list order, whose preceding days hold no
    // more than the offset; past the end, the list's last day, and the rest of the offset skips
    // all of it.
    const skip = `SELECT ${ascending ? "day" : "(day + 1)"} * ${DAY_MS} AS boundary, COALESCE(preceding, 0) AS skipped FROM (
        SELECT day, SUM(n) OVER (ORDER BY day ${direction} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS preceding
        FROM ${days})
      WHERE COALESCE(preceding, 0) <= ? ORDER BY day ${ascending ? "DESC" : "ASC"} LIMIT 1`;
    return `WITH skip (boundary, skipped) AS MATERIALIZED (${skip})
      SELECT ${select} FROM ${rows} AND created_at ${ascending ? ">=" : "<"} (SELECT boundary FROM skip)
      ORDER BY created_at ${direction}, id ${direction} LIMIT ? OFFSET ? - COALESCE((SELECT skipped FROM skip), 0)`;
  };
  return lazy(text, argsOf(days, page.offset, rows, page.limit, page.offset));
}

/**
 * How a page is read. Without equality filters, the time index holds exactly the account's
 * rows in the list order, and with only a popup filter the popup's index (migration 1) holds
 * exactly its matches: reading it is reading the page. With any other, no index does (a row's
 * index entries are few on purpose: each costs every create and import, migration 12).
 * Walking the popup's index (or, without a popup filter, the time index) and skipping what
 * the other filters reject costs as much as they are selective or correlated (a popup whose
 * leads are all completed walks the whole popup to find nothing); a merge instead takes, of
 * each tuple (popup, domain, device, status) that matches and holds rows by the maintained
 * counts, its range of `submissions_by_tuple` up to `depth` rows, so its cost follows the
 * number of matching tuples and the depth, never how many rows the filters skip. The counts
 * also say how many rows a walk reads for a page, so the statement holds both and those
 * counts choose (`walkPays`): plentiful matches are a walk of a few steps, sparse and empty
 * ones a merge. The counts are undated, so a walk is bounded (matches that cluster in time, or
 * lie outside a date window, are found by the merge once the walk stops short). Deeper than
 * MAX_MERGE_DEPTH (an export's pages, a deep offset), the counts choose the same way between
 * an unbounded walk and a merge (`deep walk or merge`): an export of plentiful matches passes
 * over the walked index once in all, where a merge would read a page's depth of every tuple
 * for every page; one of sparse matches reads only its tuples.
 *
 * bench/correlated.ts (every filter combination, the worst one reported) and bench/http.ts's
 * list (two filters whose matches are plentiful) need this.
 */
export function pageReading(filter: SubmissionFilter, depth: number): "index" | "walk or merge" | "deep walk or merge" {
  const fields = equalityFields(filter);
  if (fields.length === 0 || (fields.length === 1 && walkIndex(filter).field !== undefined)) return "index";
  return depth > MAX_MERGE_DEPTH ? "deep walk or merge" : "walk or merge";
}

/**
 * The index a list walks: the popup's when it has a popup filter (its matches are one range
 * of it, in the list order, and popups are what lists are filtered by most), else the time
 * index. The other filters have none (migration 12).
 */
function walkIndex(filter: SubmissionFilter): { index: string; field?: "popupId" } {
  return filter.popupId === undefined ? { index: "submissions_by_time" } : { index: "submissions_by_popup", field: "popupId" };
}

function isDated(filter: SubmissionFilter): boolean {
  return filter.createdAfter !== undefined || filter.createdBefore !== undefined;
}

/**
 * Rows of the walked index a walk may read for a page, where a merge costs more: a walk that
 * tests a column the index lacks (a domain or a device; the popup's index holds the status,
 * migration 21) reads a table row for each index entry, but rows are written in time order, so
 * the next entry's row is mostly on the page the last one's was, and a row read costs about
 * what a merge pays for one row of a tuple's range. What bounds it is a walk that stops short
 * (matches that cluster in time) and is then followed by the merge.
 */
const MAX_WALK_ROWS = 300;
/** Rows of the walked index a walk reads at most, where the counts said MAX_WALK_ROWS. */
const MAX_WALK_ROWS_READ = 3 * MAX_WALK_ROWS;
/** What a merge's seek into one tuple's range costs, in index rows. */
const MERGE_SEEK_ROWS = 2;

/**
 * A constant condition, true when walking the list's index (`walkIndex`, `depth` rows deep)
 * reads fewer rows than merging the matching tuples' ranges, and no more than `maxWalk` when
 * given: the walk reads about depth * (rows of the index's range) / (rows matching the
 * filters), the merge (depth + a seek) for each matching tuple. From the maintained counts:
 * one range of submission_counts, the popup's or the account's.
 */
function walkPays(accountId: string, filter: SubmissionFilter, depth: number, maxWalk?: number): SqlStatement & { args: readonly SqlValue[] } {
  const { condition, from, args } = walkPaysParts(accountId, filter, depth, maxWalk);
  return lazy(() => `(SELECT ${condition()} FROM ${from()})`, argsOf(args.condition, args.from)) as SqlStatement & { args: readonly SqlValue[] };
}

/**
 * `walkPays` as a row (pays, total) of one statement: beside the condition, the matches'
 * total by the maintained counts (undated), summed from the same rows of submission_counts.
 */
function walkPaysWithTotal(accountId: string, filter: SubmissionFilter, depth: number, maxWalk?: number): SqlStatement & { args: readonly SqlValue[] } {
  const { condition, matching, from, args } = walkPaysParts(accountId, filter, depth, maxWalk);
  return lazy(
    () => `SELECT ${condition()} AS pays, COALESCE(SUM(f.n) FILTER (WHERE ${matching()}), 0) AS total FROM ${from()}`,
    argsOf(args.condition, args.matching, args.from),
  ) as SqlStatement & { args: readonly SqlValue[] };
}

/** `walkPays`' condition, the filters `matching` among the counts it reads, and those rows (`from`), as texts, with each one's arguments. */
function walkPaysParts(accountId: string, filter: SubmissionFilter, depth: number, maxWalk?: number) {
  const { field } = walkIndex(filter);
  const others = equalityFields(filter).filter((other) => other !== field);
  const values = others.map((other) => filter[other]!);
  const matching = () => others.map((other) => `f.${EQUALITY_COLUMNS[other]} = ?`).join(" AND ");
  const condition = () => {
    const merge = `COUNT(*) FILTER (WHERE ${matching()} AND f.n > 0) * ?`;
    return `? * COALESCE(SUM(f.n), 0) <= COALESCE(SUM(f.n) FILTER (WHERE ${matching()}), 0)
            * ${maxWalk === undefined ? merge : `min(?, ${merge})`}`;
  };
  const from = () => `submission_counts f WHERE f.account_id = ?${field === undefined ? "" : " AND f.popup_id = ?"}`;
  return {
    condition,
    matching,
    from,
    args: {
      condition: argsOf(depth, values, maxWalk ?? [], values, depth + MERGE_SEEK_ROWS),
      matching: values,
      from: argsOf(accountId, field === undefined ? [] : filter[field]!),
    },
  };
}

/** Rows per tuple up to which a merge reads less than walking one filter's index would: a list page's (limit 100, one more for a cursor) and a shallow offset's. */
const MAX_MERGE_DEPTH = 200;

function equalityFields(filter: SubmissionFilter): (keyof typeof EQUALITY_COLUMNS)[] {
  return EQUALITY_FIELDS.filter((field) => filter[field] !== undefined);
}

function equalityCount(filter: SubmissionFilter): number {
  return equalityFields(filter).length;
}

/** A page of a list without equality filters, or with only a popup filter, read from the index that holds exactly its rows. */
function indexPage(accountId: string, filter: SubmissionFilter, order: "asc" | "desc", page: PageBounds, select: string): SqlStatement {
  const direction = order === "asc" ? "ASC" : "DESC";
  return lazy(
    () => `SELECT ${select} FROM submissions INDEXED BY ${walkIndex(filter).index} WHERE ${whereText(filter)}${cursorText(order, page.after)} ORDER BY created_at ${direction}, id ${direction} LIMIT ? OFFSET ?`,
    argsOf(whereArgs(accountId, filter), cursorArgs(page.after), page.limit, page.offset),
  );
}

/**
 * A LIMIT of `limit` while the constant `condition` holds, else 0: SQLite evaluates a LIMIT
 * once, before it reads any row, where a condition in the WHERE clause it would test on
 * every row the walk reads (and reject them all).
 */
function onlyIf(condition: { sql: string } | undefined, limit: string): string {
  return condition === undefined ? limit : `CASE WHEN ${condition.sql} THEN ${limit} ELSE 0 END`;
}

/**
 * The walk cursor as a condition on (created_at, id), of `table` when given, starting with AND;
 * its arguments are `cursorArgs`. With the date bounds beside it: `rangeText`.
 */
function cursorText(order: "asc" | "desc" | undefined, after: SubmissionCursor | undefined, table?: string): string {
  if (after === undefined) return "";
  const columns = table === undefined ? "created_at, id" : `${table}.created_at, ${table}.id`;
  return ` AND (${columns}) ${order === "asc" ? ">" : "<"} (?, ?)`;
}

function cursorArgs(after: SubmissionCursor | undefined): (string | number)[] {
  return after === undefined ? [] : [after.createdAt, after.submissionId];
}

/**
 * A page read by walking the list's index (`walkIndex`), the other filters' columns read from
 * the index where it holds them (the popup's holds the status, migration 21), else from the
 * table, when `pays` holds (`walk_pays` of the statement that holds it, or `walkPays`
 * itself; always without it): at most `maxRead` of its rows when given, so that matches the undated counts placed
 * evenly but which cluster in time (a popup whose older leads are all completed, listed oldest
 * first) cost a bounded walk before the merge reads the page.
 */
function indexWalk(
  accountId: string,
  filter: SubmissionFilter,
  order: "asc" | "desc",
  page: PageBounds,
  select: string,
  pays: { readonly sql: string; args: readonly SqlValue[] } | undefined,
  maxRead?: number,
): SqlStatement {
  const direction = order === "asc" ? "ASC" : "DESC";
  const { index, field } = walkIndex(filter);
  if (maxRead === undefined) {
    return lazy(
      () => `SELECT ${select} FROM submissions INDEXED BY ${index} WHERE ${whereText(filter)}${cursorText(order, page.after)}
            ORDER BY created_at ${direction}, id ${direction} LIMIT ${onlyIf(pays, "?")} OFFSET ?`,
      argsOf(whereArgs(accountId, filter), cursorArgs(page.after), pays?.args ?? [], page.limit, page.offset),
    );
  }
  const others = equalityFields(filter).filter((other) => other !== field);
  // No ORDER BY outside: the walk's rows come in its order, and a sort would read them all.
  // bench/correlated.ts: the walk hands out only the row's rowid and what the filters test, and
  // only the rows they keep are read whole: copying each walked row out whole (`SELECT *`, its
  // data too) cost a walk that keeps few of its rows more than reading the kept ones again.
  return lazy(
    () => `SELECT ${select} FROM (
            SELECT rowid AS walked_rowid${others.map((other) => `, ${EQUALITY_COLUMNS[other]} AS walked_${EQUALITY_COLUMNS[other]}`).join("")}
              FROM submissions INDEXED BY ${index} WHERE account_id = ?${field === undefined ? "" : " AND popup_id = ?"}${rangeText("submissions", filter, order, page.after)}
              ORDER BY created_at ${direction}, id ${direction} LIMIT ${onlyIf(pays, "?")})
          CROSS JOIN submissions ON submissions.rowid = walked_rowid
          WHERE ${others.map((other) => `walked_${EQUALITY_COLUMNS[other]} = ?`).join(" AND ")} LIMIT ? OFFSET ?`,
    argsOf(
      accountId, field === undefined ? [] : filter[field]!, rangeArgs(filter, page.after), pays?.args ?? [], maxRead,
      others.map((other) => filter[other]!), page.limit, page.offset,
    ),
  );
}

/**
 * The total: a sum of the maintained counts (migration 4) when only equality filters apply.
 * With dates, the counts per day (migrations 7, 10 and 18) of the days the range covers, and of a
 * day at its ends, the rows on the smaller side of the bound counted: added when they are
 * inside the range, else taken from that day's count. So a month costs about what a day does,
 * and a range from midnight to midnight counts next to no rows (bench/correlated.ts's
 * combinations with a month's window need this).
 */
function countStatement(accountId: string, filter: SubmissionFilter, counting: Counting): SqlStatement {
  // Without dates the WHERE clause names only columns submission_counts has too.
  if (counting === "counts") {
    return lazy(() => `SELECT COALESCE(SUM(n), 0) AS total FROM submission_counts WHERE ${whereText(filter)}`, whereArgs(accountId, filter));
  }
  if (counting === "rows") return rowCount(accountId, filter);
  const plan = counting;
  const ends = (ranges: DateRange[]) => ranges.map((range) => rowCount(accountId, { ...filter, ...range }));
  const counted = [dayCounts(accountId, filter, plan.first, plan.last)].concat(ends(plan.added));
  const subtracted = ends(plan.taken);
  return lazy(
    () => `SELECT ${counted.map((part) => `(${part.sql})`).join(" + ")}${subtracted.map((part) => ` - (${part.sql})`).join("")} AS total`,
    counted.concat(subtracted).flatMap((part) => part.args ?? []),
  );
}

type DateRange = { createdAfter: number; createdBefore: number };

/** How a total is counted: the maintained counts (undated), the rows (a range without a whole day), or by day (`datedCount`). */
type Counting = "counts" | "rows" | DatedCount;

function countingOf(filter: SubmissionFilter): Counting {
  if (!isDated(filter)) return "counts";
  return datedCount(filter) ?? "rows";
}

interface DatedCount {
  first?: number;
  last?: number;
  added: DateRange[];
  taken: DateRange[];
}

/**
 * How `countStatement` counts a dated total: the days `first` to `last` from the counts per
 * day, the rows of the `added` ranges added and of the `taken` ones taken away (a range that
 * holds no whole millisecond left out); undefined when the range holds no whole day.
 */
function datedCount(filter: SubmissionFilter): DatedCount | undefined {
  const days = wholeDays(filter);
  if (days === undefined) return undefined;
  let { first, last } = days;
  const added: DateRange[] = [];
  const taken: DateRange[] = [];
  // The rows of an end of the range; none when it holds no whole millisecond.
  const end = (into: DateRange[], range: DateRange) => {
    if (Math.floor(range.createdAfter) + 1 < Math.ceil(range.createdBefore)) into.push(range);
  };
  const { createdAfter, createdBefore } = filter;
  if (createdAfter !== undefined) {
    // created_at is whole milliseconds: after `a` is from floor(a) + 1
    const from = Math.floor(createdAfter) + 1;
    const dayStart = (first! - 1) * DAY_MS;
    if (from - dayStart < DAY_MS / 2) {
      first = first! - 1;
      end(taken, { createdAfter: dayStart - 1, createdBefore: from });
    } else {
      end(added, { createdAfter, createdBefore: first! * DAY_MS });
    }
  }
  if (createdBefore !== undefined) {
    // before `b` is up to ceil(b) - 1
    const to = Math.ceil(createdBefore);
    const dayStart = (last! + 1) * DAY_MS;
    if (to - dayStart > DAY_MS / 2) {
      last = last! + 1;
      end(taken, { createdAfter: to - 1, createdBefore: dayStart + DAY_MS });
    } else {
      end(added, { createdAfter: dayStart - 1, createdBefore });
    }
  }
  return { first, last, added, taken };
}

/** What a total's text depends on (`countStatement`), for `ListStatements`' `shape`. */
function countShape(counting: Counting): string {
  if (typeof counting === "string") return counting;
  const plan = counting;
  return `days ${plan.first === undefined ? "-" : "["}${plan.last === undefined ? "-" : "]"} +${plan.added.length} -${plan.taken.length}`;
}

/**
 * The rows of days `first` to `last` (either undefined: unbounded) matching the filter's
 * equality fields: the account's counts per day (its statuses') without any, the value's with
 * one; with more and a popup filter, each matching tuple's (from the totals, as a merge takes
 * them), without a popup filter each matching (domain, device, status)'s, every popup's
 * together (migration 18), whose days are a range apiece where the tuples' are a dozen.
 */
function dayCounts(accountId: string, filter: SubmissionFilter, first: number | undefined, last: number | undefined): SqlStatement {
  const range = () => `${first === undefined ? "" : " AND d.day >= ?"}${last === undefined ? "" : " AND d.day <= ?"}`;
  const rangeArgs = argsOf(first ?? [], last ?? []);
  const fields = equalityFields(filter);
  if (fields.length === 0) {
    return lazy(() => `SELECT COALESCE(SUM(d.n), 0) FROM submission_value_days d WHERE d.account_id = ? AND d.field = 'status'${range()}`, argsOf(accountId, rangeArgs));
  }
  if (fields.length === 1) {
    const [field] = fields as [keyof typeof EQUALITY_COLUMNS];
    return lazy(
      () => `SELECT COALESCE(SUM(d.n), 0) FROM submission_value_days d WHERE d.account_id = ? AND d.field = ?${range()} AND d.value = ?`,
      argsOf(accountId, EQUALITY_COLUMNS[field], rangeArgs, filter[field]!),
    );
  }
  if (filter.popupId !== undefined) {
    return lazy(
      () => `SELECT COALESCE(SUM(d.n), 0) FROM submission_counts c CROSS JOIN submission_day_counts d
            ON ${TUPLE_COLUMNS.map((column) => `d.${column} = c.${column}`).join(" AND ")}${range()} WHERE ${matchingTuplesWhere(filter)}`,
      argsOf(rangeArgs, matchingTuplesArgs(accountId, filter)),
    );
  }
  if (fields.length === ALL_POPUPS_COLUMNS.length) {
    const equalities = { ...filter, createdAfter: undefined, createdBefore: undefined };
    return lazy(
      () => `SELECT COALESCE(SUM(d.n), 0) FROM submission_day_counts_all_popups d WHERE ${whereText(equalities, "d.")}${range()}`,
      argsOf(whereArgs(accountId, equalities), rangeArgs),
    );
  }
  // The matching (domain, device, status) that hold rows, from the tuples' totals.
  return lazy(
    () => `SELECT COALESCE(SUM(d.n), 0) FROM (SELECT DISTINCT ${ALL_POPUPS_COLUMNS.map((column) => `c.${column}`).join(", ")} FROM submission_counts c
            WHERE ${matchingTuplesWhere(filter)}) c CROSS JOIN submission_day_counts_all_popups d
          ON d.account_id = ?${ALL_POPUPS_COLUMNS.map((column) => ` AND d.${column} = c.${column}`).join("")}${range()}`,
    argsOf(matchingTuplesArgs(accountId, filter), accountId, rangeArgs),
  );
}

/** The columns migration 18's counts per day are kept by, after the account's. */
const ALL_POPUPS_COLUMNS = ["domain", "device", "status"] as const;

/**
 * The whole UTC days inside the filter's exclusive date range (`first` undefined: from the
 * beginning, `last`: to the end), or undefined when there is none: then the range is at most
 * two partial days.
 */
function wholeDays(filter: SubmissionFilter): { first?: number; last?: number } | undefined {
  // created_at is whole milliseconds: after `a` means after floor(a), before `b` before ceil(b).
  const first = filter.createdAfter === undefined ? undefined : Math.floor(filter.createdAfter / DAY_MS) + 1;
  const last = filter.createdBefore === undefined ? undefined : Math.floor(Math.ceil(filter.createdBefore) / DAY_MS) - 1;
  if (first !== undefined && last !== undefined && first > last) return undefined;
  return { first, last };
}

/**
 * The rows in the filter's range, counted: over the matching tuples' ranges when two or more
 * equality filters apply (see `pageReading`), else over the popup's index or the time index
 * (at most half a day's rows, where one filter's tuples may be many). With two or more, a
 * range that holds few rows of that index (the instant of a bound at midnight, which a total's
 * day at its end takes away) is counted there too, each row's filters read from the table:
 * a seek into every matching tuple's range costs more.
 */
function rowCount(accountId: string, filter: SubmissionFilter): SqlStatement {
  const { index, field } = walkIndex(filter);
  const walked = () => `SELECT COUNT(*) AS total FROM submissions INDEXED BY ${index} WHERE ${whereText(filter)}`;
  if (equalityCount(filter) < 2) return lazy(walked, whereArgs(accountId, filter));
  const indexed = { ...(field === undefined ? {} : { [field]: filter[field] }), createdAfter: filter.createdAfter, createdBefore: filter.createdBefore };
  const text = () => {
    const few = `(SELECT COUNT(*) FROM (SELECT 1 FROM submissions INDEXED BY ${index} WHERE ${whereText(indexed)} LIMIT ?)) < ?`;
    return `SELECT CASE WHEN ${few} THEN (${walked()}) ELSE (SELECT COUNT(*) FROM ${MATCHING_TUPLES_FROM} ON ${TUPLE_JOIN}${rangeText("s", filter)} WHERE ${matchingTuplesWhere(filter)}) END AS total`;
  };
  return lazy(text, argsOf(
    whereArgs(accountId, indexed), MAX_COUNTED_ROWS, MAX_COUNTED_ROWS, whereArgs(accountId, filter), rangeArgs(filter), matchingTuplesArgs(accountId, filter),
  ));
}

/** Rows of a range up to which `rowCount` reads them from the popup's or the time index rather than seek into the matching tuples' ranges. */
const MAX_COUNTED_ROWS = 16;

/**
 * What each row of a walk is (`walkStatement`): `rows`, SUBMISSION_ARRAY (for
 * `arrayToSubmission`); `csv parts`, the five values of SUBMISSION_CSV_PARTS; `lines`, the
 * submission's line of NDJSON (SUBMISSION_LINE); `lines as stored`, that line with `data` as
 * stored (SUBMISSION_LINE_AS_STORED).
 */
export type WalkRows = "rows" | "csv parts" | "lines" | "lines as stored";

/**
 * The page after `walk.after`: a row-value comparison on (created_at, id), which SQLite walks
 * as a range of the same index the list uses, however deep the page. Each row is one value
 * (`submission`, as `as` says) and its cursor. `wholePage` reads a page as one value.
 */
export function walkStatement(accountId: string, walk: SubmissionWalk, as: WalkRows = "rows"): WalkStatement {
  const filter = withoutBoundBehind(walk);
  const bounds = { limit: walk.limit, offset: 0, after: walk.after };
  const reading = readingOf(filter, bounds);
  return {
    shape: `walk ${as} ${fieldsShape(filter, walk.order, bounds)} ${reading}`,
    page: pageStatement(accountId, filter, walk.order, bounds, WALK_SELECT[as], reading),
  };
}

/** A walk's page (`walkStatement`) and, as `ListStatements` has it, the shape its text is kept under. */
export interface WalkStatement {
  shape: string;
  page: SqlStatement;
}

const WALK_SELECT: Record<WalkRows, string> = {
  rows: `${SUBMISSION_ARRAY} AS submission, created_at, id`,
  "csv parts": `${SUBMISSION_CSV_PARTS} AS submission, created_at, id`,
  lines: `${SUBMISSION_LINE} AS submission, created_at, id`,
  "lines as stored": `${SUBMISSION_LINE_AS_STORED} AS submission, created_at, id`,
};

const TUPLE_COLUMNS = ["account_id", "popup_id", "domain", "device", "status"];
const TUPLE_JOIN = TUPLE_COLUMNS.map((column) => `s.${column} = c.${column}`).join(" AND ");

/**
 * The count rows of the tuples that match the filter's equality fields and hold rows, as `c`
 * (MATCHING_TUPLES_FROM: joined to their rows as `s`): the condition, and its arguments
 * (`matchingTuplesArgs`).
 */
function matchingTuplesWhere(filter: SubmissionFilter): string {
  return `${whereText({ ...filter, createdAfter: undefined, createdBefore: undefined }, "c.")} AND c.n > 0`;
}

function matchingTuplesArgs(accountId: string, filter: SubmissionFilter): SqlValue[] {
  return whereArgs(accountId, { ...filter, createdAfter: undefined, createdBefore: undefined });
}

// CROSS JOIN keeps the counts as the outer loop: each tuple is one range of the index.
const MATCHING_TUPLES_FROM = "submission_counts c CROSS JOIN submissions s INDEXED BY submissions_by_tuple";

// bench/correlated.ts: the dated lists over two filters whose tuples are many paid that seek for every tuple.
/**
 * A page read by merging the matching tuples' ranges (see `pageReading`): each tuple's range of
 * `submissions_by_tuple` read in the list order, into a sort that keeps the page's depth
 * (`offset + limit`) of candidates; then the page from those, and only its rows read from the
 * table. The range is read in the ORDER BY's order as the inner loop of the join, so once a row
 * no longer fits among the kept candidates, none after it in that tuple does, and SQLite goes
 * on with the next tuple (its ORDER BY LIMIT optimization: `test/stores/sql-schema.test.ts`
 * checks that the merge has it): at most the depth of each tuple is read, without a seek to
 * find where that depth ends.
 */
function mergedPage(
  accountId: string,
  filter: SubmissionFilter,
  order: "asc" | "desc",
  page: PageBounds,
  select: string,
  unless?: { readonly sql: string; args?: readonly SqlValue[] },
): SqlStatement {
  const direction = order === "asc" ? "ASC" : "DESC";
  const text = () => {
    const candidates = `SELECT s.rowid AS candidate FROM ${MATCHING_TUPLES_FROM}
    ON ${TUPLE_JOIN}${rangeText("s", filter, order, page.after)}
    WHERE ${matchingTuplesWhere(filter)} ORDER BY s.created_at ${direction}, s.id ${direction} LIMIT ${onlyIf(unless && { sql: `NOT ${unless.sql}` }, "?")} OFFSET ?`;
    // By rowid (the tuples' index holds it) from the candidates, one lookup where the primary
    // key's index would be two: left to itself, SQLite would walk the time index to save the
    // sort of a page. The outer LIMIT keeps the ORDER BY, which SQLite may drop from a subquery
    // without one (wholePage reads this one).
    return `SELECT ${select} FROM (${candidates}) CROSS JOIN submissions ON submissions.rowid = candidate
          ORDER BY created_at ${direction}, id ${direction} LIMIT ?`;
  };
  return lazy(text, argsOf(
    rangeArgs(filter, page.after), matchingTuplesArgs(accountId, filter), unless?.args ?? [], page.limit, page.offset, page.limit,
  ));
}

/** The date bounds and the walk cursor as conditions on `table`'s (created_at, id), each starting with AND; their arguments are `rangeArgs`. */
function rangeText(table: string, filter: SubmissionFilter, order?: "asc" | "desc", after?: SubmissionCursor): string {
  let sql = "";
  if (filter.createdAfter !== undefined) sql += ` AND ${table}.created_at > ?`;
  if (filter.createdBefore !== undefined) sql += ` AND ${table}.created_at < ?`;
  return sql + cursorText(order, after, table);
}

function rangeArgs(filter: SubmissionFilter, after?: SubmissionCursor): SqlValue[] {
  return argsOf(filter.createdAfter ?? [], filter.createdBefore ?? [], cursorArgs(after));
}

// bench/http.ts (list): the binding converts each value of each row on its own, at a cost per
// value, and each aggregate of the page cost SQLite more than the text's marks around the time.
/**
 * A list page (`page` of `listStatements` as "json" or "json as stored", or its `merge()`) and its total as one
 * row of one statement, so one snapshot without a transaction: `total`, and `submissions`, the
 * rows' texts with their times apart (SUBMISSION_JSON_TIME_APART) joined by char(30), which no
 * JSON text holds raw, in the order SQLite aggregated them (see `wholePage`): each text holds
 * its row's cursor (`submissionIdOf`). `choice`: the WITH clause the page and the total read
 * (`listStatements`), put in front.
 */
export function pageWithTotal(page: SqlStatement, count: SqlStatement, choice?: SqlStatement): SqlStatement {
  return withChoice(choice, lazy(
    () => `SELECT (${count.sql}) AS total, group_concat(submission, char(30)) AS submissions FROM (${page.sql})`,
    argsOf(count.args ?? [], page.args ?? []),
    { oneRow: true },
  ));
}

/**
 * A walk of a list (`page` of `listStatements` with a `merge`, or its `chosenWalk`) read as rows,
 * each with the total when the counts chose the walk (`walkCount`, or `count` beside
 * `chosenWalk`) as a last column; `choice`, when given, put in front.
 */
export function rowsWithTotal(page: SqlStatement, walkCount: SqlStatement, choice?: SqlStatement): SqlStatement {
  return withChoice(choice, lazy(
    () => `SELECT *, (${walkCount.sql}) AS total FROM (${page.sql})`,
    argsOf(walkCount.args ?? [], page.args ?? []),
    { asArrays: true },
  ));
}

// bench/export.ts: CSV and NDJSON >= 200k rows/s need a page read as one text, not a row at a time from the driver.
/**
 * A walk page as one row: `page`, the rows' values joined by `separator` (NULL for no rows).
 * SQLite aggregates a subquery with a LIMIT in its ORDER BY order (it runs it as a co-routine,
 * never flattened into the aggregate), which it does not promise: the store checks the order of
 * every page (`lastInOrder`) from the rows' cursors, so that an engine that ever aggregates
 * otherwise fails loudly. Each aggregate's own ORDER BY (as the change log's page has) would
 * promise it, but sorts every page again, a cost bench/export.ts and bench/http.ts's list feel.
 * The cursors: as ",", each row's values (SUBMISSION_ARRAY, SUBMISSION_CSV_PARTS) hold its own;
 * as "lines", they come as JSON arrays `times` and `ids`, and `page` is the values (each a line
 * that ends with its line feed) one after the other, as a BLOB: the driver hands it out as
 * bytes, not as a string that the export would encode again (bench/export.ts, NDJSON). One row,
 * read as one (`oneRow`): the libSQL binding's reading of all rows cost more a page, and gave
 * the BLOB as a plain Uint8Array rather than a Node Buffer (see `oneLinePerRow`).
 */
export function wholePage(statement: SqlStatement, separator: "," | "lines"): SqlStatement {
  const select = separator === ","
    ? "group_concat(submission, ',') AS page"
    : "CAST(group_concat(submission, '') AS BLOB) AS page, json_group_array(created_at) AS times, json_group_array(id) AS ids";
  return lazy(() => `SELECT ${select} FROM (${statement.sql})`, statement.args ?? [], { oneRow: true });
}

/**
 * The walk without the date bound on the side it comes from, when the cursor is past it: the
 * cursor then implies the bound, and SQLite, given both, would range over the bound and filter
 * on the cursor - a scan from the start of the range on every page.
 */
function withoutBoundBehind(walk: SubmissionWalk): SubmissionFilter {
  const { after, createdAfter, createdBefore, ...filter } = walk;
  return {
    ...filter,
    ...(createdAfter !== undefined && !(walk.order === "asc" && after && after.createdAt > createdAfter) ? { createdAfter } : {}),
    ...(createdBefore !== undefined && !(walk.order === "desc" && after && after.createdAt < createdBefore) ? { createdBefore } : {}),
  };
}

/**
 * The data keys a filter's matches can have, from the key list the store keeps (migration 3):
 * one popup's keys, or every popup's. Other filters do not narrow it.
 */
export function dataKeysStatement(accountId: string, filter: SubmissionFilter, limit: number): SqlStatement {
  const popup = filter.popupId === undefined ? "" : " AND popup_id = ?";
  return {
    sql: `SELECT DISTINCT key FROM submission_data_keys WHERE account_id = ?${popup} ORDER BY key LIMIT ?`,
    args: [accountId, ...(filter.popupId === undefined ? [] : [filter.popupId]), limit],
  };
}

// bench/store.ts (list): on one core, V8's compiling of the list path beside the lists sets their
// slowest timings, and an array literal that spreads arrays compiles to a loop over each one's
// iterator, for every kind of array it has met: spreading made most of what TurboFan compiled
// for walkPaysParts and indexWalk, and spreading the arrays `map` makes threw their compiled code
// away at its first call (in optimized code `map` makes an array of another kind than the
// builtin does). One loop by index, here, is compiled once; bench/http.ts (list): `concat` of
// the parts, which looks up each part's Symbol.isConcatSpreadable, cost about four times as much.
/** A statement's arguments, in order: each part one value or a list of them. */
function argsOf(...parts: readonly (SqlValue | readonly SqlValue[])[]): SqlValue[] {
  const args: SqlValue[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!Array.isArray(part)) {
      args.push(part as SqlValue);
      continue;
    }
    for (let j = 0; j < part.length; j++) args.push(part[j]);
  }
  return args;
}

/** The filter as a WHERE condition on `table`'s columns; its arguments are `whereArgs`. */
function whereText(filter: SubmissionFilter, table = ""): string {
  let where = `${table}account_id = ?`;
  for (const field of EQUALITY_FIELDS) if (filter[field] !== undefined) where += ` AND ${table}${EQUALITY_COLUMNS[field]} = ?`;
  if (filter.createdAfter !== undefined) where += " AND created_at > ?";
  if (filter.createdBefore !== undefined) where += " AND created_at < ?";
  return where;
}

function whereArgs(accountId: string, filter: SubmissionFilter): SqlValue[] {
  const args: SqlValue[] = [accountId];
  for (const field of EQUALITY_FIELDS) {
    const value = filter[field];
    if (value !== undefined) args.push(value);
  }
  if (filter.createdAfter !== undefined) args.push(filter.createdAfter);
  if (filter.createdBefore !== undefined) args.push(filter.createdBefore);
  return args;
}
