/**
 * The SQL that reads submissions: a list page and its total, a page of a walk (keyset paging),
 * and the distinct data keys, all with the same WHERE clause. Kept apart from the store so that
 * `test/stores/sql-schema.test.ts` can `EXPLAIN QUERY PLAN` these very statements.
 */
import type { SqlStatement } from "./driver.ts";
import type { SubmissionFilter, SubmissionQuery, SubmissionWalk } from "../../store.ts";

export const SUBMISSION_COLUMNS = "id, popup_id, domain, device, user_agent, status, created_at, data";

/** `created_at` as the API writes it: ISO 8601 in UTC with milliseconds. */
const CREATED_AT_ISO = "strftime('%Y-%m-%dT%H:%M:%fZ', created_at / 1000.0, 'unixepoch')";

/**
 * What separates the rows of a page (`wholePage`), and in a packed row the fields from `data`:
 * control characters a JSON text never holds raw (RFC 8259 escapes them inside strings, and
 * allows only space, tab, CR and LF between tokens), so no row needs escaping for them.
 */
export const ROW_SEPARATOR = "\x1e";
export const FIELD_SEPARATOR = "\x1f";
const sqlChar = (text: string) => `char(${text.charCodeAt(0)})`;

/**
 * `data` as stored: the JSON text JSON.stringify wrote, which holds no line break, so it goes
 * into an NDJSON line as it is, without SQLite parsing it again. A text with a raw line break
 * (none is written so, but a hand-edited row could be) is re-serialised.
 */
const DATA_JSON = "(CASE WHEN instr(data, char(10)) OR instr(data, char(13)) THEN json(data) ELSE data END)";

/**
 * What `walkStatement` packs into one text per row: a JSON array of the fields of a Submission
 * but `data`, in this order, with the time as epoch milliseconds (JavaScript writes the ISO
 * text faster than strftime); then FIELD_SEPARATOR and `data` as stored. One json_array is a
 * third of the cost of quoting and concatenating each field apart (bench/README.md, export).
 */
const PACKED_ROW = `json_array(id, popup_id, domain, user_agent, device, status, created_at) || ${sqlChar(FIELD_SEPARATOR)} || data`;

/**
 * A row as the API's JSON text, written by SQLite: the keys in the order of the Submission
 * type, `data` as stored, `createdAt` with milliseconds. It is the text JSON.stringify gives
 * (SQLite escapes strings the same way), so NDJSON exports skip parsing and re-serialising.
 */
const SUBMISSION_JSON = `'{"submissionId":' || json_quote(id) || ',"popupId":' || json_quote(popup_id) || ',"data":' || ${DATA_JSON} ||
  ',"domain":' || json_quote(domain) || ',"userAgent":' || json_quote(user_agent) || ',"device":' || json_quote(device) ||
  ',"status":' || json_quote(status) || ',"createdAt":"' || ${CREATED_AT_ISO} || '"}'`;

const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" } as const;

export function listStatements(accountId: string, query: SubmissionQuery): { page: SqlStatement; count: SqlStatement } {
  const { where, args } = whereClause(accountId, query);
  const direction = query.order === "asc" ? "ASC" : "DESC";
  return {
    page: {
      sql: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${where}
            ORDER BY created_at ${direction}, id ${direction} LIMIT ? OFFSET ?`,
      args: [...args, query.limit, query.offset],
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
 * as a range of the same index the list uses, however deep the page. Each row is one text
 * (column `submission`): PACKED_ROW, or as `json` the submission's JSON text. `wholePage`
 * makes a page one text of them.
 */
export function walkStatement(accountId: string, walk: SubmissionWalk, as: "packed" | "json" = "packed"): SqlStatement {
  const { where, args } = whereClause(accountId, withoutBoundBehind(walk));
  const [direction, comparison] = walk.order === "asc" ? ["ASC", ">"] : ["DESC", "<"];
  const after = walk.after ? ` AND (created_at, id) ${comparison} (?, ?)` : "";
  const afterArgs = walk.after ? [walk.after.createdAt, walk.after.submissionId] : [];
  return {
    sql: `SELECT ${as === "json" ? SUBMISSION_JSON : PACKED_ROW} AS submission FROM submissions WHERE ${where}${after}
          ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    args: [...args, ...afterArgs, walk.limit],
  };
}

/**
 * The statement's rows as one value, separated by ROW_SEPARATOR (NULL for no rows). A
 * driver builds an object per row and column, which for a page of a thousand rows costs more
 * than the query; one value per page does not. SQLite aggregates the subquery's rows in its
 * ORDER BY order (a subquery with LIMIT is run as a co-routine, never flattened into the
 * aggregate); the store checks the order of what it gets all the same.
 */
export function wholePage(statement: SqlStatement): SqlStatement {
  return { sql: `SELECT group_concat(submission, ${sqlChar(ROW_SEPARATOR)}) AS page FROM (${statement.sql})`, args: statement.args };
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
