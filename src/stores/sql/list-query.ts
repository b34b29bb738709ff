/**
 * The SQL that reads submissions: a list page and its total, a page of a walk (keyset paging),
 * and the distinct data keys, all with the same WHERE clause. Kept apart from the store so that
 * `test/stores/sql-schema.test.ts` can `EXPLAIN QUERY PLAN` these very statements.
 */
import type { SqlStatement } from "./driver.ts";
import type { SubmissionCursor, SubmissionFilter, SubmissionQuery, SubmissionWalk } from "../../store.ts";
import { SUBMISSION_ARRAY, SUBMISSION_COLUMNS, SUBMISSION_JSON, SUBMISSION_JSON_AROUND_TIME } from "./submission-row.ts";

const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" } as const;

/** A list's statements (`listStatements`). */
export interface ListStatements {
  page: SqlStatement;
  count: SqlStatement;
  /** When the counts choose between a walk and a merge: the page read by the merge. */
  merge?: () => SqlStatement;
  /** Beside `merge`: the counts' choice, a WITH clause that `page` and `walkCount` read (`withChoice`). */
  choice?: SqlStatement;
  /** Beside `merge`: the total when the counts chose the walk, else NULL. */
  walkCount?: SqlStatement;
}

/**
 * A list page and its total. The page's rows, as arrays: SUBMISSION_COLUMNS (for
 * `rowToSubmission`), or `as` "json" the submission's JSON text around its time
 * (SUBMISSION_JSON_AROUND_TIME's head), its created_at, id, and the text's tail.
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
 */
export function listStatements(accountId: string, query: SubmissionQuery, as: "rows" | "json" = "rows"): ListStatements {
  const select = as === "json" ? `${SUBMISSION_JSON_AROUND_TIME.head} AS head, created_at, id, ${SUBMISSION_JSON_AROUND_TIME.tail} AS tail` : SUBMISSION_COLUMNS;
  const bounds = { limit: query.limit, offset: query.offset };
  const count = { ...countStatement(accountId, query), oneRow: true } as const;
  if (readsWalkOrMerge(query, bounds)) {
    const pays = walkPays(accountId, query, bounds.offset + bounds.limit, MAX_WALK_ROWS);
    return {
      page: { ...indexWalk(accountId, query, query.order, bounds, select, CHOSEN, MAX_WALK_ROWS_READ), asArrays: true },
      count,
      merge: () => ({ ...mergedPage(accountId, query, query.order, bounds, select), asArrays: true }),
      choice: { sql: `WITH walk_pays (pays) AS MATERIALIZED (SELECT ${pays.sql})`, args: pays.args },
      walkCount: { sql: `SELECT CASE WHEN ${CHOSEN.sql} THEN (${count.sql}) END AS total`, args: count.args, oneRow: true },
    };
  }
  return { page: { ...pageStatement(accountId, query, query.order, bounds, select), asArrays: true }, count };
}

/** The counts' choice of a walk, as the WITH clause of `listStatements`' `choice` holds it. */
const CHOSEN = { sql: "(SELECT pays FROM walk_pays)", args: [] };

/** `statement` with the WITH clause `choice` (of `listStatements`) in front, when given. */
export function withChoice(choice: SqlStatement | undefined, statement: SqlStatement): SqlStatement {
  return choice === undefined ? statement : { ...statement, sql: `${choice.sql} ${statement.sql}`, args: [...(choice.args ?? []), ...(statement.args ?? [])] };
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

function readsWalkOrMerge(filter: SubmissionFilter, page: PageBounds): boolean {
  return !skipsDays(filter, page) && pageReading(filter, page.offset + page.limit) === "walk or merge";
}

/** A deep offset without a cursor, a date range or two equality filters: `daySkippingPage` reads it. */
function skipsDays(filter: SubmissionFilter, page: PageBounds): boolean {
  return page.offset >= MIN_DAY_SKIP && page.after === undefined && equalityCount(filter) <= 1 && !isDated(filter);
}

/** A page of `select` by the reading `pageReading` chooses. */
function pageStatement(accountId: string, filter: SubmissionFilter, order: "asc" | "desc", page: PageBounds, select: string): SqlStatement {
  if (skipsDays(filter, page)) return daySkippingPage(accountId, filter, order, page, select);
  const reading = pageReading(filter, page.offset + page.limit);
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
  return {
    sql: `WITH walk_pays (pays) AS MATERIALIZED (SELECT ${pays.sql}), walked AS MATERIALIZED (${walk.sql})
          SELECT * FROM walked WHERE ${walkFound.sql} UNION ALL SELECT * FROM (${merge.sql})`,
    args: [...pays.args, ...walk.args!, ...walkFound.args, ...merge.args!],
  };
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
  const days = field === undefined
    ? { sql: `(${ACCOUNT_DAYS})`, args: [accountId] }
    : { sql: "submission_value_days WHERE account_id = ? AND field = ? AND value = ?", args: [accountId, EQUALITY_COLUMNS[field], filter[field]!] };
  const rows = field === undefined
    ? { sql: "submissions WHERE account_id = ?", args: [accountId] }
    : { sql: `submissions INDEXED BY ${walkIndex(filter).index} WHERE account_id = ? AND ${EQUALITY_COLUMNS[field]} = ?`, args: [accountId, filter[field]!] };
  // The day the offset falls in is the last, in the list order, whose preceding days hold no
  // more than the offset; past the end, the list's last day, and the rest of the offset skips
  // all of it.
  const skip = `SELECT ${ascending ? "day" : "(day + 1)"} * ${DAY_MS} AS boundary, COALESCE(preceding, 0) AS skipped FROM (
      SELECT day, SUM(n) OVER (ORDER BY day ${direction} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS preceding
      FROM ${days.sql})
    WHERE COALESCE(preceding, 0) <= ? ORDER BY day ${ascending ? "DESC" : "ASC"} LIMIT 1`;
  return {
    sql: `WITH skip (boundary, skipped) AS MATERIALIZED (${skip})
      SELECT ${select} FROM ${rows.sql} AND created_at ${ascending ? ">=" : "<"} (SELECT boundary FROM skip)
      ORDER BY created_at ${direction}, id ${direction} LIMIT ? OFFSET ? - COALESCE((SELECT skipped FROM skip), 0)`,
    args: [...days.args, page.offset, ...rows.args, page.limit, page.offset],
  };
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
 * Rows of the walked index a walk may read for a page, where a merge costs more: a walk reads
 * a table row for each index entry, but rows are written in time order, so the next entry's
 * row is mostly on the page the last one's was, and a row read costs about what a merge pays
 * for one row of a tuple's range. What bounds it is a walk that stops short (matches that
 * cluster in time) and is then followed by the merge.
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
function walkPays(accountId: string, filter: SubmissionFilter, depth: number, maxWalk?: number): { sql: string; args: (string | number)[] } {
  const { field } = walkIndex(filter);
  const others = equalityFields(filter).filter((other) => other !== field);
  const matching = others.map((other) => `f.${EQUALITY_COLUMNS[other]} = ?`).join(" AND ");
  const values = others.map((other) => filter[other]!);
  const merge = `COUNT(*) FILTER (WHERE ${matching} AND f.n > 0) * ?`;
  return {
    sql: `(SELECT ? * COALESCE(SUM(f.n), 0) <= COALESCE(SUM(f.n) FILTER (WHERE ${matching}), 0)
            * ${maxWalk === undefined ? merge : `min(?, ${merge})`}
          FROM submission_counts f WHERE f.account_id = ?${field === undefined ? "" : " AND f.popup_id = ?"})`,
    args: [
      depth, ...values, ...(maxWalk === undefined ? [] : [maxWalk]), ...values, depth + MERGE_SEEK_ROWS, accountId,
      ...(field === undefined ? [] : [filter[field]!]),
    ],
  };
}

/** Rows per tuple up to which a merge reads less than walking one filter's index would: a list page's (limit 100, one more for a cursor) and a shallow offset's. */
const MAX_MERGE_DEPTH = 200;

function equalityFields(filter: SubmissionFilter): (keyof typeof EQUALITY_COLUMNS)[] {
  return (Object.keys(EQUALITY_COLUMNS) as (keyof typeof EQUALITY_COLUMNS)[]).filter((field) => filter[field] !== undefined);
}

function equalityCount(filter: SubmissionFilter): number {
  return equalityFields(filter).length;
}

/** A page of a list without equality filters, or with only a popup filter, read from the index that holds exactly its rows. */
function indexPage(accountId: string, filter: SubmissionFilter, order: "asc" | "desc", page: PageBounds, select: string): SqlStatement {
  const { where, args } = whereClause(accountId, filter);
  const after = cursorCondition(order, page.after);
  const direction = order === "asc" ? "ASC" : "DESC";
  return {
    sql: `SELECT ${select} FROM submissions INDEXED BY ${walkIndex(filter).index} WHERE ${where}${after.sql} ORDER BY created_at ${direction}, id ${direction} LIMIT ? OFFSET ?`,
    args: [...args, ...after.args, page.limit, page.offset],
  };
}

/**
 * A LIMIT of `limit` while the constant `condition` holds, else 0: SQLite evaluates a LIMIT
 * once, before it reads any row, where a condition in the WHERE clause it would test on
 * every row the walk reads (and reject them all).
 */
function onlyIf(condition: { sql: string } | undefined, limit: string): string {
  return condition === undefined ? limit : `CASE WHEN ${condition.sql} THEN ${limit} ELSE 0 END`;
}

/** The walk cursor as a condition on (created_at, id), starting with AND. */
function cursorCondition(order: "asc" | "desc", after: SubmissionCursor | undefined): { sql: string; args: (string | number)[] } {
  if (after === undefined) return { sql: "", args: [] };
  return { sql: ` AND (created_at, id) ${order === "asc" ? ">" : "<"} (?, ?)`, args: [after.createdAt, after.submissionId] };
}

/**
 * A page read by walking the list's index (`walkIndex`), the other filters' columns read from
 * the table, when `pays` holds (`walk_pays` of the statement that holds it, or `walkPays`
 * itself): at most `maxRead` of its rows when given, so that matches the undated counts placed
 * evenly but which cluster in time (a popup whose older leads are all completed, listed oldest
 * first) cost a bounded walk before the merge reads the page.
 */
function indexWalk(
  accountId: string,
  filter: SubmissionFilter,
  order: "asc" | "desc",
  page: PageBounds,
  select: string,
  pays: { sql: string; args: (string | number)[] },
  maxRead?: number,
): SqlStatement {
  const direction = order === "asc" ? "ASC" : "DESC";
  const { index, field } = walkIndex(filter);
  if (maxRead === undefined) {
    const { where, args } = whereClause(accountId, filter);
    const after = cursorCondition(order, page.after);
    return {
      sql: `SELECT ${select} FROM submissions INDEXED BY ${index} WHERE ${where}${after.sql}
            ORDER BY created_at ${direction}, id ${direction} LIMIT ${onlyIf(pays, "?")} OFFSET ?`,
      args: [...args, ...after.args, ...pays.args, page.limit, page.offset],
    };
  }
  const others = equalityFields(filter).filter((other) => other !== field);
  const range = rangeOf("submissions", filter, order, page.after);
  // No ORDER BY outside: the walk's rows come in its order, and a sort would read them all.
  return {
    sql: `SELECT ${select} FROM (
            SELECT * FROM submissions INDEXED BY ${index} WHERE account_id = ?${field === undefined ? "" : " AND popup_id = ?"}${range.sql}
              ORDER BY created_at ${direction}, id ${direction} LIMIT ${onlyIf(pays, "?")})
          WHERE ${others.map((other) => `${EQUALITY_COLUMNS[other]} = ?`).join(" AND ")} LIMIT ? OFFSET ?`,
    args: [
      accountId, ...(field === undefined ? [] : [filter[field]!]), ...range.args, ...pays.args, maxRead,
      ...others.map((other) => filter[other]!), page.limit, page.offset,
    ],
  };
}

/**
 * The total: a sum of the maintained counts (migration 4) when only equality filters apply.
 * With dates, the counts per day (migrations 7 and 10) of the days the range covers, and of a
 * day at its ends, the rows on the smaller side of the bound counted: added when they are
 * inside the range, else taken from that day's count. So a month costs about what a day does,
 * and a range from midnight to midnight counts next to no rows (bench/correlated.ts's
 * combinations with a month's window need this).
 */
function countStatement(accountId: string, filter: SubmissionFilter): SqlStatement {
  // Without dates the WHERE clause names only columns submission_counts has too.
  if (!isDated(filter)) {
    const { where, args } = whereClause(accountId, filter);
    return { sql: `SELECT COALESCE(SUM(n), 0) AS total FROM submission_counts WHERE ${where}`, args };
  }
  const days = wholeDays(filter);
  if (days === undefined) return rowCount(accountId, filter);
  let { first, last } = days;
  const added: (SqlStatement | undefined)[] = [];
  const taken: (SqlStatement | undefined)[] = [];
  const { createdAfter, createdBefore } = filter;
  if (createdAfter !== undefined) {
    // created_at is whole milliseconds: after `a` is from floor(a) + 1
    const from = Math.floor(createdAfter) + 1;
    const dayStart = (first! - 1) * DAY_MS;
    if (from - dayStart < DAY_MS / 2) {
      first = first! - 1;
      taken.push(endCount(accountId, { ...filter, createdAfter: dayStart - 1, createdBefore: from }));
    } else {
      added.push(endCount(accountId, { ...filter, createdAfter, createdBefore: first! * DAY_MS }));
    }
  }
  if (createdBefore !== undefined) {
    // before `b` is up to ceil(b) - 1
    const to = Math.ceil(createdBefore);
    const dayStart = (last! + 1) * DAY_MS;
    if (to - dayStart > DAY_MS / 2) {
      last = last! + 1;
      taken.push(endCount(accountId, { ...filter, createdAfter: to - 1, createdBefore: dayStart + DAY_MS }));
    } else {
      added.push(endCount(accountId, { ...filter, createdAfter: dayStart - 1, createdBefore }));
    }
  }
  const counted = [dayCounts(accountId, filter, first, last), ...added.filter((part) => part !== undefined)];
  const subtracted = taken.filter((part) => part !== undefined);
  return {
    sql: `SELECT ${counted.map((part) => `(${part.sql})`).join(" + ")}${subtracted.map((part) => ` - (${part.sql})`).join("")} AS total`,
    args: [...counted, ...subtracted].flatMap((part) => part.args ?? []),
  };
}

/**
 * The rows of days `first` to `last` (either undefined: unbounded) matching the filter's
 * equality fields: the account's counts per day (its statuses') without any, the value's with one, else each
 * matching tuple's (from the totals, as a merge takes them).
 */
function dayCounts(accountId: string, filter: SubmissionFilter, first: number | undefined, last: number | undefined): SqlStatement {
  const range = `${first === undefined ? "" : " AND d.day >= ?"}${last === undefined ? "" : " AND d.day <= ?"}`;
  const rangeArgs = [...(first === undefined ? [] : [first]), ...(last === undefined ? [] : [last])];
  const fields = equalityFields(filter);
  if (fields.length === 0) {
    return { sql: `SELECT COALESCE(SUM(d.n), 0) FROM submission_value_days d WHERE d.account_id = ? AND d.field = 'status'${range}`, args: [accountId, ...rangeArgs] };
  }
  if (fields.length === 1) {
    const [field] = fields as [keyof typeof EQUALITY_COLUMNS];
    return {
      sql: `SELECT COALESCE(SUM(d.n), 0) FROM submission_value_days d WHERE d.account_id = ? AND d.field = ?${range} AND d.value = ?`,
      args: [accountId, EQUALITY_COLUMNS[field], ...rangeArgs, filter[field]!],
    };
  }
  const tuples = matchingTuples(accountId, filter);
  return {
    sql: `SELECT COALESCE(SUM(d.n), 0) FROM submission_counts c CROSS JOIN submission_day_counts d
          ON ${TUPLE_COLUMNS.map((column) => `d.${column} = c.${column}`).join(" AND ")}${range} WHERE ${tuples.where}`,
    args: [...rangeArgs, ...tuples.args],
  };
}

/** A UTC day in milliseconds: the days of `submission_day_counts` (migrations.ts, dayOf). */
const DAY_MS = 86_400_000;

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
  const { where, args } = whereClause(accountId, filter);
  const { index, field } = walkIndex(filter);
  const walked = { sql: `SELECT COUNT(*) AS total FROM submissions INDEXED BY ${index} WHERE ${where}`, args };
  if (equalityCount(filter) < 2) return walked;
  const range = rangeOf("s", filter);
  const tuples = matchingTuples(accountId, filter);
  const indexed = whereClause(accountId, { ...(field === undefined ? {} : { [field]: filter[field] }), createdAfter: filter.createdAfter, createdBefore: filter.createdBefore });
  const few = `(SELECT COUNT(*) FROM (SELECT 1 FROM submissions INDEXED BY ${index} WHERE ${indexed.where} LIMIT ?)) < ?`;
  return {
    sql: `SELECT CASE WHEN ${few} THEN (${walked.sql}) ELSE (SELECT COUNT(*) FROM ${tuples.from} ON ${TUPLE_JOIN}${range.sql} WHERE ${tuples.where}) END AS total`,
    args: [...indexed.args, MAX_COUNTED_ROWS, MAX_COUNTED_ROWS, ...args, ...range.args, ...tuples.args],
  };
}

/** Rows of a range up to which `rowCount` reads them from the popup's or the time index rather than seek into the matching tuples' ranges. */
const MAX_COUNTED_ROWS = 16;

/** The rows of an end of a total's range (`countStatement`), counted; none when the range holds no whole millisecond. */
function endCount(accountId: string, filter: SubmissionFilter & { createdAfter: number; createdBefore: number }): SqlStatement | undefined {
  return Math.floor(filter.createdAfter) + 1 < Math.ceil(filter.createdBefore) ? rowCount(accountId, filter) : undefined;
}

/**
 * The page after `walk.after`: a row-value comparison on (created_at, id), which SQLite walks
 * as a range of the same index the list uses, however deep the page. Each row is one value
 * (`submission`) and its cursor: as `rows`, SUBMISSION_ARRAY (for `arrayToSubmission`); as
 * `json`, the submission's JSON text (SUBMISSION_JSON). `wholePage` reads a page as one text.
 */
export function walkStatement(accountId: string, walk: SubmissionWalk, as: "rows" | "json" = "rows"): SqlStatement {
  const value = `${as === "json" ? SUBMISSION_JSON : SUBMISSION_ARRAY} AS submission, created_at, id`;
  return pageStatement(accountId, withoutBoundBehind(walk), walk.order, { limit: walk.limit, offset: 0, after: walk.after }, value);
}

const TUPLE_COLUMNS = ["account_id", "popup_id", "domain", "device", "status"];
const TUPLE_JOIN = TUPLE_COLUMNS.map((column) => `s.${column} = c.${column}`).join(" AND ");

/** The count rows of the tuples that match the filter's equality fields and hold rows, as `c` (`from`: joined to their rows as `s`). */
function matchingTuples(accountId: string, filter: SubmissionFilter): { from: string; where: string; args: (string | number)[] } {
  const { where, args } = whereClause(accountId, { ...filter, createdAfter: undefined, createdBefore: undefined }, "c.");
  // CROSS JOIN keeps the counts as the outer loop: each tuple is one range of the index.
  return { from: "submission_counts c CROSS JOIN submissions s INDEXED BY submissions_by_tuple", where: `${where} AND c.n > 0`, args };
}

/**
 * A page read by merging the matching tuples' ranges (see `pageReading`): of each tuple, the
 * rows up to its `offset + limit`-th in the list order (ties included), found by a seek into
 * the tuple's range; then the page from those, and only its rows read from the table.
 */
function mergedPage(
  accountId: string,
  filter: SubmissionFilter,
  order: "asc" | "desc",
  page: PageBounds,
  select: string,
  unless?: { sql: string; args: (string | number)[] },
): SqlStatement {
  const ascending = order === "asc";
  const direction = ascending ? "ASC" : "DESC";
  const deepestRange = rangeOf("k", filter, order, page.after);
  const deepest = `SELECT k.created_at FROM submissions k INDEXED BY submissions_by_tuple
    WHERE ${TUPLE_COLUMNS.map((column) => `k.${column} = c.${column}`).join(" AND ")}${deepestRange.sql}
    ORDER BY k.created_at ${direction}, k.id ${direction} LIMIT 1 OFFSET ?`;
  // The far end of each tuple's range is its deepest row, or else the date bound on that side
  // (as whole milliseconds, inclusive): one bound, so that SQLite ranges over it rather than
  // over the whole window.
  const { createdAfter, createdBefore } = filter;
  const [reach, otherwise] = ascending
    ? ["<=", createdBefore === undefined ? 1e300 : Math.ceil(createdBefore) - 1]
    : [">=", createdAfter === undefined ? -1e300 : Math.floor(createdAfter) + 1];
  const nearRange = rangeOf("s", ascending ? { ...filter, createdBefore: undefined } : { ...filter, createdAfter: undefined }, order, page.after);
  const tuples = matchingTuples(accountId, filter);
  const candidates = `SELECT s.id AS candidate FROM ${tuples.from}
    ON ${TUPLE_JOIN}${nearRange.sql} AND s.created_at ${reach} COALESCE((${deepest}), ?)
    WHERE ${tuples.where} ORDER BY s.created_at ${direction}, s.id ${direction} LIMIT ${onlyIf(unless && { sql: `NOT ${unless.sql}` }, "?")} OFFSET ?`;
  return {
    // By primary key from the candidates: left to itself, SQLite would walk the time index to
    // save the sort of a page. The outer LIMIT keeps the ORDER BY, which SQLite may drop from a
    // subquery without one (wholePage reads this one).
    sql: `SELECT ${select} FROM (${candidates}) CROSS JOIN submissions ON account_id = ? AND id = candidate
          ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    args: [
      ...nearRange.args, ...deepestRange.args, page.offset + page.limit - 1, otherwise, ...tuples.args, ...(unless?.args ?? []), page.limit, page.offset, accountId, page.limit,
    ],
  };
}

/** The date bounds and the walk cursor as conditions on `table`'s (created_at, id), each starting with AND. */
function rangeOf(table: string, filter: SubmissionFilter, order?: "asc" | "desc", after?: SubmissionCursor): { sql: string; args: (string | number)[] } {
  let sql = "";
  const args: (string | number)[] = [];
  if (filter.createdAfter !== undefined) {
    sql += ` AND ${table}.created_at > ?`;
    args.push(filter.createdAfter);
  }
  if (filter.createdBefore !== undefined) {
    sql += ` AND ${table}.created_at < ?`;
    args.push(filter.createdBefore);
  }
  if (after !== undefined) {
    sql += ` AND (${table}.created_at, ${table}.id) ${order === "asc" ? ">" : "<"} (?, ?)`;
    args.push(after.createdAt, after.submissionId);
  }
  return { sql, args };
}

// bench/http.ts (list): the binding converts each value of each row on its own, at a cost per value.
/**
 * A list page (`page` of `listStatements` as "json", or its `merge()`) and its total as one
 * row of one statement, so one snapshot without a transaction: `total`; `heads` and `tails`,
 * the rows' texts around their time joined by char(30), which no JSON text holds raw; and the
 * rows' `times` and `ids` as JSON arrays, in the order SQLite aggregated them (see `wholePage`).
 * `choice`: the WITH clause the page and the total read (`listStatements`), put in front.
 */
export function pageWithTotal(page: SqlStatement, count: SqlStatement, choice?: SqlStatement): SqlStatement {
  return withChoice(choice, {
    sql: `SELECT (${count.sql}) AS total, group_concat(head, char(30)) AS heads, group_concat(tail, char(30)) AS tails,
          json_group_array(created_at) AS times, json_group_array(id) AS ids FROM (${page.sql})`,
    args: [...(count.args ?? []), ...(page.args ?? [])],
    oneRow: true,
  });
}

// bench/export.ts: CSV and NDJSON >= 200k rows/s need a page read as one text, not a row at a time from the driver.
/**
 * A walk page as one row: `page`, the rows' values joined by `separator` (NULL for no rows),
 * and their cursors as JSON arrays `times` and `ids`. SQLite aggregates a subquery with a
 * LIMIT in its ORDER BY order (it runs it as a co-routine, never flattened into the
 * aggregate); the store checks the order all the same. As "lines", `page` is the values each
 * ending with a line feed, as a BLOB: the driver hands it out as bytes, not as a string that
 * the export would encode again (bench/export.ts, NDJSON).
 */
export function wholePage(statement: SqlStatement, separator: "," | "lines"): SqlStatement {
  const page = separator === "," ? "group_concat(submission, ',')" : "CAST(group_concat(submission, char(10)) || char(10) AS BLOB)";
  return {
    sql: `SELECT ${page} AS page, json_group_array(created_at) AS times,
          json_group_array(id) AS ids FROM (${statement.sql})`,
    args: statement.args,
  };
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

function whereClause(accountId: string, filter: SubmissionFilter, table = ""): { where: string; args: (string | number)[] } {
  const conditions = [`${table}account_id = ?`];
  const args: (string | number)[] = [accountId];
  for (const [field, column] of Object.entries(EQUALITY_COLUMNS)) {
    const value = filter[field as keyof typeof EQUALITY_COLUMNS];
    if (value === undefined) continue;
    conditions.push(`${table}${column} = ?`);
    args.push(value);
  }
  if (filter.createdAfter !== undefined) {
    conditions.push("created_at > ?");
    args.push(filter.createdAfter);
  }
  if (filter.createdBefore !== undefined) {
    conditions.push("created_at < ?");
    args.push(filter.createdBefore);
  }
  return { where: conditions.join(" AND "), args };
}
