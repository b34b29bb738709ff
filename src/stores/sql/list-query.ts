/**
 * The SQL that reads submissions: a list page and its total, a page of a walk (keyset paging),
 * and the distinct data keys, all with the same WHERE clause. Kept apart from the store so that
 * `test/stores/sql-schema.test.ts` can `EXPLAIN QUERY PLAN` these very statements.
 */
import type { SqlStatement } from "./driver.ts";
import type { SubmissionCursor, SubmissionFilter, SubmissionQuery, SubmissionWalk } from "../../store.ts";
import { SUBMISSION_COLUMNS, SUBMISSION_JSON } from "./submission-row.ts";

const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" } as const;

export function listStatements(accountId: string, query: SubmissionQuery): { page: SqlStatement; count: SqlStatement } {
  const direction = query.order === "asc" ? "ASC" : "DESC";
  const ordered = `ORDER BY created_at ${direction}, id ${direction}`;
  const page: SqlStatement =
    pageReading(query, query.offset + query.limit) === "tuple merge"
      ? mergedPage(accountId, query, query.order, { limit: query.limit, offset: query.offset }, SUBMISSION_COLUMNS)
      : (() => {
          const { where, args } = indexWhere(accountId, query, query.offset);
          return { sql: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${where} ${ordered} LIMIT ? OFFSET ?`, args: [...args, query.limit, query.offset] };
        })();
  return { page: { ...page, asArrays: true }, count: countStatement(accountId, query) };
}

/**
 * How a page is read. With at most one equality filter, the index of that filter (or the time
 * index) holds exactly the matches in the list order: reading it is reading the page. With
 * two or more, no index does: walking one of them and skipping what the others reject costs
 * as much as the filters are correlated (a popup whose leads are all completed walks the whole
 * popup to find nothing). Then the page is a merge instead: the maintained counts name the
 * tuples (popup, domain, device, status) that match and still hold rows, and each tuple's
 * range of `submissions_by_tuple` gives at most `depth` rows, so the cost follows the number of
 * matching tuples and the depth, never how many rows the filters skip. Deeper than
 * MAX_MERGE_DEPTH (an export's pages, a deep offset), SQLite's own plan reads the rows, once
 * the counts say any match: an export passes over the filter's index once in all, where a
 * merge would read a page's depth of every tuple for every page.
 *
 * bench/correlated.ts (every filter combination, the worst one reported) needs this.
 */
export function pageReading(filter: SubmissionFilter, depth: number): "index" | "tuple merge" {
  return equalityCount(filter) >= 2 && depth <= MAX_MERGE_DEPTH ? "tuple merge" : "index";
}

/** Rows per tuple up to which a merge reads less than walking one filter's index would: a list page's (limit 100, one more for a cursor) and a shallow offset's. */
const MAX_MERGE_DEPTH = 200;

function equalityCount(filter: SubmissionFilter): number {
  return Object.keys(EQUALITY_COLUMNS).filter((field) => filter[field as keyof typeof EQUALITY_COLUMNS] !== undefined).length;
}

/**
 * The WHERE clause of a page read from one index (`pageReading`), which with two or more
 * equality filters first asks the counts whether any tuple matches (more than `offset` rows,
 * without dates): SQLite checks that once, before it walks anything.
 */
function indexWhere(accountId: string, filter: SubmissionFilter, offset = 0): { where: string; args: (string | number)[] } {
  const { where, args } = whereClause(accountId, filter);
  if (equalityCount(filter) < 2) return { where, args };
  const tuples = matchingTuples(accountId, filter);
  const dated = filter.createdAfter !== undefined || filter.createdBefore !== undefined;
  return {
    where: `${where} AND (SELECT COALESCE(SUM(c.n), 0) FROM submission_counts c WHERE ${tuples.where}) > ?`,
    args: [...args, ...tuples.args, dated ? 0 : offset],
  };
}

/**
 * The total: a sum of the maintained counts (migration 4) when only equality filters apply.
 * With dates, the counts per day (migration 7) of the whole days inside the range, plus the
 * rows counted in the days at its ends, so that a month costs about what a day does
 * (bench/correlated.ts's combinations with a month's window need this).
 */
function countStatement(accountId: string, filter: SubmissionFilter): SqlStatement {
  const dated = filter.createdAfter !== undefined || filter.createdBefore !== undefined;
  // Without dates the WHERE clause names only columns submission_counts has too.
  if (!dated) {
    const { where, args } = whereClause(accountId, filter);
    return { sql: `SELECT COALESCE(SUM(n), 0) AS total FROM submission_counts WHERE ${where}`, args };
  }
  const days = wholeDays(filter);
  if (days === undefined) return rowCount(accountId, filter);
  const dayRange = `${days.first === undefined ? "" : " AND d.day >= ?"}${days.last === undefined ? "" : " AND d.day <= ?"}`;
  const dayArgs = [...(days.first === undefined ? [] : [days.first]), ...(days.last === undefined ? [] : [days.last])];
  const tuples = matchingTuples(accountId, filter);
  // Of each matching tuple (from the totals, as a merge takes them), its range of days.
  const wholeDaysSum = {
    sql: `SELECT COALESCE(SUM(d.n), 0) FROM submission_counts c CROSS JOIN submission_day_counts d
          ON ${TUPLE_COLUMNS.map((column) => `d.${column} = c.${column}`).join(" AND ")}${dayRange} WHERE ${tuples.where}`,
    args: [...dayArgs, ...tuples.args],
  };
  const parts: SqlStatement[] = [wholeDaysSum];
  if (days.first !== undefined) parts.push(rowCount(accountId, { ...filter, createdBefore: days.first * DAY_MS }));
  if (days.last !== undefined) parts.push(rowCount(accountId, { ...filter, createdAfter: (days.last + 1) * DAY_MS - 1 }));
  return { sql: `SELECT ${parts.map((part) => `(${part.sql})`).join(" + ")} AS total`, args: parts.flatMap((part) => part.args ?? []) };
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
 * The rows in the filter's range, counted: over the tuples' ranges when two or more equality
 * filters apply (see `pageReading`), else over the one index that holds the matches.
 */
function rowCount(accountId: string, filter: SubmissionFilter): SqlStatement {
  if (pageReading(filter, 0) === "index") {
    const { where, args } = whereClause(accountId, filter);
    return { sql: `SELECT COUNT(*) AS total FROM submissions WHERE ${where}`, args };
  }
  const range = rangeOf("s", filter);
  const tuples = matchingTuples(accountId, filter);
  return { sql: `SELECT COUNT(*) AS total FROM ${tuples.from} ON ${TUPLE_JOIN}${range.sql} WHERE ${tuples.where}`, args: [...range.args, ...tuples.args] };
}

/**
 * The page after `walk.after`: a row-value comparison on (created_at, id), which SQLite walks
 * as a range of the same index the list uses, however deep the page. Each row is one value
 * (`submission`) and its cursor: as `rows`, SUBMISSION_COLUMNS as a JSON array (for
 * `rowToSubmission`); as `json`, the submission's JSON text (SUBMISSION_JSON). `wholePage`
 * reads a page as one text.
 */
export function walkStatement(accountId: string, walk: SubmissionWalk, as: "rows" | "json" = "rows"): SqlStatement {
  const filter = withoutBoundBehind(walk);
  const value = `${as === "json" ? SUBMISSION_JSON : `json_array(${SUBMISSION_COLUMNS})`} AS submission, created_at, id`;
  if (pageReading(filter, walk.limit) === "tuple merge") {
    return mergedPage(accountId, filter, walk.order, { limit: walk.limit, offset: 0, after: walk.after }, value);
  }
  const { where, args } = indexWhere(accountId, filter);
  const [direction, comparison] = walk.order === "asc" ? ["ASC", ">"] : ["DESC", "<"];
  const after = walk.after ? ` AND (created_at, id) ${comparison} (?, ?)` : "";
  const afterArgs = walk.after ? [walk.after.createdAt, walk.after.submissionId] : [];
  return {
    sql: `SELECT ${value} FROM submissions WHERE ${where}${after} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    args: [...args, ...afterArgs, walk.limit],
  };
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
  page: { limit: number; offset: number; after?: SubmissionCursor },
  select: string,
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
    WHERE ${tuples.where} ORDER BY s.created_at ${direction}, s.id ${direction} LIMIT ? OFFSET ?`;
  return {
    // By primary key from the candidates: left to itself, SQLite would walk the time index to
    // save the sort of a page. The outer LIMIT keeps the ORDER BY, which SQLite may drop from a
    // subquery without one (wholePage reads this one).
    sql: `SELECT ${select} FROM (${candidates}) CROSS JOIN submissions ON account_id = ? AND id = candidate
          ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    args: [
      ...nearRange.args, ...deepestRange.args, page.offset + page.limit - 1, otherwise, ...tuples.args, page.limit, page.offset, accountId, page.limit,
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

// bench/export.ts: CSV and NDJSON >= 200k rows/s need a page read as one text, not a row at a time from the driver.
/**
 * A walk page as one row: `page`, the rows' values joined by `separator` (NULL for no rows),
 * and their cursors as JSON arrays `times` and `ids`. SQLite aggregates a subquery with a
 * LIMIT in its ORDER BY order (it runs it as a co-routine, never flattened into the
 * aggregate); the store checks the order all the same.
 */
export function wholePage(statement: SqlStatement, separator: "," | "\n"): SqlStatement {
  return {
    sql: `SELECT group_concat(submission, ${separator === "," ? "','" : "char(10)"}) AS page, json_group_array(created_at) AS times,
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
