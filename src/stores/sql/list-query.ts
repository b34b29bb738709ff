/**
 * The SQL that reads submissions: a list page and its total, a page of a walk (keyset paging),
 * and the distinct data keys, all with the same WHERE clause. Kept apart from the store so that
 * `test/stores/sql-schema.test.ts` can `EXPLAIN QUERY PLAN` these very statements.
 */
import type { SqlStatement } from "./driver.ts";
import type { SubmissionFilter, SubmissionQuery, SubmissionWalk } from "../../store.ts";
import { SUBMISSION_COLUMNS, SUBMISSION_JSON } from "./submission-row.ts";

const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" } as const;

export function listStatements(accountId: string, query: SubmissionQuery): { page: SqlStatement; count: SqlStatement } {
  const { where, args } = whereClause(accountId, query);
  const direction = query.order === "asc" ? "ASC" : "DESC";
  return {
    page: {
      sql: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${where}
            ORDER BY created_at ${direction}, id ${direction} LIMIT ? OFFSET ?`,
      args: [...args, query.limit, query.offset],
      asArrays: true,
    },
    count: countStatement(query, where, args),
  };
}

/**
 * The total: a sum of the maintained counts (migration 4) when only equality filters apply,
 * else a count of the rows in the date range.
 */
function countStatement(filter: SubmissionFilter, where: string, args: (string | number)[]): SqlStatement {
  const dated = filter.createdAfter !== undefined || filter.createdBefore !== undefined;
  // Without dates the WHERE clause names only columns submission_counts has too.
  return dated
    ? { sql: `SELECT COUNT(*) AS total FROM submissions WHERE ${where}`, args }
    : { sql: `SELECT COALESCE(SUM(n), 0) AS total FROM submission_counts WHERE ${where}`, args };
}

/**
 * The page after `walk.after`: a row-value comparison on (created_at, id), which SQLite walks
 * as a range of the same index the list uses, however deep the page. Each row is one value
 * (`submission`) and its cursor: as `rows`, SUBMISSION_COLUMNS as a JSON array (for
 * `rowToSubmission`); as `json`, the submission's JSON text (SUBMISSION_JSON). `wholePage`
 * reads a page as one text.
 */
export function walkStatement(accountId: string, walk: SubmissionWalk, as: "rows" | "json" = "rows"): SqlStatement {
  const { where, args } = whereClause(accountId, withoutBoundBehind(walk));
  const [direction, comparison] = walk.order === "asc" ? ["ASC", ">"] : ["DESC", "<"];
  const after = walk.after ? ` AND (created_at, id) ${comparison} (?, ?)` : "";
  const afterArgs = walk.after ? [walk.after.createdAt, walk.after.submissionId] : [];
  return {
    sql: `SELECT ${as === "json" ? SUBMISSION_JSON : `json_array(${SUBMISSION_COLUMNS})`} AS submission, created_at, id
          FROM submissions WHERE ${where}${after} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    args: [...args, ...afterArgs, walk.limit],
  };
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

function whereClause(accountId: string, filter: SubmissionFilter): { where: string; args: (string | number)[] } {
  const conditions = ["account_id = ?"];
  const args: (string | number)[] = [accountId];
  for (const [field, column] of Object.entries(EQUALITY_COLUMNS)) {
    const value = filter[field as keyof typeof EQUALITY_COLUMNS];
    if (value === undefined) continue;
    conditions.push(`${column} = ?`);
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
