/**
 * A submission as a row of the PostgreSQL `submissions` table, both ways, and the SQL that reads
 * them: a list page with its total, a walk page (keyset), all with one WHERE clause.
 */
import { formatInstant } from "../../instant.ts";
import { identifierKey, type SubmissionFilter, type SubmissionQuery, type SubmissionWalk } from "../../store.ts";
import type { Submission } from "../../submission.ts";

/** The columns every read selects, in this order (`rowToSubmission`, `rowToJson`). */
export const SUBMISSION_COLUMNS = "id, popup_id, data, domain, user_agent, device, status, created_at";

/** A row of SUBMISSION_COLUMNS, as the postgres package gives it with `.values()`. */
export type SubmissionRow = readonly [string, string, string, string, string, string, string, string | number];

export function rowToSubmission(row: SubmissionRow): Submission {
  return {
    submissionId: row[0],
    popupId: row[1],
    data: JSON.parse(row[2]) as Submission["data"],
    domain: row[3],
    userAgent: row[4],
    device: row[5] as Submission["device"],
    status: row[6] as Submission["status"],
    createdAt: formatInstant(Number(row[7])),
  };
}

/**
 * The text `JSON.stringify(rowToSubmission(row))` gives, without parsing `data`: it is stored
 * as JSON.stringify wrote it, and the other fields are strings.
 */
export function rowToJson(row: SubmissionRow): string {
  const q = JSON.stringify;
  return `{"submissionId":${q(row[0])},"popupId":${q(row[1])},"data":${row[2]},"domain":${q(row[3])},"userAgent":${q(row[4])},"device":${q(
    row[5],
  )},"status":${q(row[6])},"createdAt":"${formatInstant(Number(row[7]))}"}`;
}

/** A submission as the JSON record `json_to_recordset` reads in INSERT_ROWS. */
export function submissionRecord(s: Submission, event: string): Record<string, string | number> {
  return {
    id: s.submissionId,
    popup_id: s.popupId,
    data: JSON.stringify(s.data),
    domain: s.domain,
    user_agent: s.userAgent,
    device: s.device,
    status: s.status,
    created_at: Date.parse(s.createdAt),
    event,
  };
}

/**
 * What a batch of rows adds to the data-key list and the identifier index (writes.ts), as the
 * JSON arrays `formsink_insert` reads: each popup's distinct keys once per batch, but for those
 * `stored` says the table holds, and each identifying field with a string value.
 */
export function derivedRecords(
  submissions: readonly Submission[],
  identifyingFields: readonly string[],
  stored: (popupId: string, key: string) => boolean = () => false,
): { dataKeys: string; identifiers: string; keys: ReadonlyMap<string, ReadonlySet<string>> } {
  const keys = new Map<string, Set<string>>();
  const identifiers: { field: string; value_key: string; submission_id: string }[] = [];
  for (const s of submissions) {
    let popupKeys = keys.get(s.popupId);
    if (popupKeys === undefined) keys.set(s.popupId, (popupKeys = new Set()));
    for (const key in s.data) if (!stored(s.popupId, key)) popupKeys.add(key);
    for (const field of identifyingFields) {
      const value = s.data[field];
      if (typeof value === "string") identifiers.push({ field, value_key: identifierKey(field, value), submission_id: s.submissionId });
    }
  }
  const dataKeys = [...keys].flatMap(([popup_id, popupKeys]) => [...popupKeys].map((key) => ({ popup_id, key })));
  return { dataKeys: JSON.stringify(dataKeys), identifiers: JSON.stringify(identifiers), keys };
}

/**
 * The walk without the date bound on the side it comes from, when the cursor is past it: the
 * cursor then implies the bound, and an index scan given both may start from the bound and skip
 * to the cursor row by row, on every page.
 */
function withoutBoundBehind(walk: SubmissionWalk): SubmissionFilter {
  const { after, createdAfter, createdBefore, ...filter } = walk;
  const pastAfter = walk.order === "asc" && after !== undefined && createdAfter !== undefined && after.createdAt >= createdAfter;
  const pastBefore = walk.order === "desc" && after !== undefined && createdBefore !== undefined && after.createdAt <= createdBefore;
  return { ...filter, ...(pastAfter ? {} : { createdAfter }), ...(pastBefore ? {} : { createdBefore }) };
}

const EQUALITY_COLUMNS = { popupId: "popup_id", domain: "domain", device: "device", status: "status" } as const;

type Value = string | number;
const isDated = (filter: SubmissionFilter) => filter.createdAfter !== undefined || filter.createdBefore !== undefined;

/**
 * The filters no index of `submissions` leads with: domain, device and status (PostgreSQL
 * migration 9 dropped their indexes, as each costs every create and import). A list with none of
 * them reads the time index, or with a popup filter the popup's, which holds exactly its
 * matches in the list order; one with any of them reads a page by walking one of those indexes
 * or by merging the matching tuples' ranges of `submissions_by_tuple` (`walkOrMerge`).
 */
function tupleFilters(filter: SubmissionFilter): ("domain" | "device" | "status")[] {
  return (["domain", "device", "status"] as const).filter((field) => filter[field] !== undefined);
}

/** Parameters of a statement, numbered in the order they are added. */
class Parameters {
  readonly values: Value[] = [];
  add(value: Value): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * Conditions on `table`'s (created_at, id): the date bounds and, for a walk, the cursor, each
 * starting with AND. Whole milliseconds in the column: t > x exactly when t > floor(x), t < x
 * when t < ceil(x); a cursor inside a millisecond passes every row of the millisecond before
 * (or after) it.
 */
function rangeConditions(table: string, filter: SubmissionFilter, p: Parameters, order: "asc" | "desc", after?: SubmissionWalk["after"]): string {
  let sql = "";
  if (filter.createdAfter !== undefined) sql += ` AND ${table}.created_at > ${p.add(Math.floor(filter.createdAfter))}::bigint`;
  if (filter.createdBefore !== undefined) sql += ` AND ${table}.created_at < ${p.add(Math.ceil(filter.createdBefore))}::bigint`;
  const comparison = order === "asc" ? ">" : "<";
  if (after && Number.isInteger(after.createdAt)) {
    sql += ` AND (${table}.created_at, ${table}.id) ${comparison} (${p.add(after.createdAt)}::bigint, ${p.add(after.submissionId)}::text)`;
  } else if (after) {
    sql += ` AND ${table}.created_at ${comparison} ${p.add(order === "asc" ? Math.floor(after.createdAt) : Math.ceil(after.createdAt))}::bigint`;
  }
  return sql;
}

/** The equality filters as conditions on `table`, each starting with AND. */
function equalityConditions(table: string, filter: SubmissionFilter, p: Parameters, fields: readonly (keyof typeof EQUALITY_COLUMNS)[]): string {
  return fields
    .filter((field) => filter[field] !== undefined)
    .map((field) => ` AND ${table}.${EQUALITY_COLUMNS[field]} = ${p.add(filter[field]!)}::text`)
    .join("");
}

/** What a seek into one tuple's range costs a merge, in index rows. */
const MERGE_SEEK_ROWS = 2;
/** How many times the rows the counts expect a walk to read it may read before the merge reads the page. */
const WALK_SLACK = 3;

/**
 * The first `depth` rows (SUBMISSION_COLUMNS, in the list order) of a filter with domain,
 * device or status filters (`tupleFilters`), read one of two ways in one statement: a walk of
 * the popup's index (or, without a popup filter, the time index) that skips the rows the other
 * filters reject, or a merge of each matching tuple's (popup, domain, device, status) first
 * `depth` rows in `submissions_by_tuple`. The maintained counts choose: a walk reads about
 * depth x (rows of its range) / (matching rows), a merge (depth + a seek) for each matching
 * tuple, so plentiful matches are a walk of a few steps and sparse or empty ones a merge whose
 * cost follows the tuples, not the rows skipped. The counts are undated, and matches can cluster
 * in time: the walk reads at most WALK_SLACK times what the counts expect, and when that does
 * not find `depth` rows the merge reads them. Both sides read only index entries but for the
 * rows they return.
 */
function walkOrMerge(accountId: string, filter: SubmissionFilter, p: Parameters, order: "asc" | "desc", depth: number, after?: SubmissionWalk["after"]): string {
  const direction = order === "asc" ? "ASC" : "DESC";
  const account = p.add(accountId);
  const depthParameter = `${p.add(depth)}::bigint`;
  const others = tupleFilters(filter);
  const popup = filter.popupId === undefined ? "" : ` AND c.popup_id = ${p.add(filter.popupId)}::text`;
  const matching = others.map((field) => `c.${EQUALITY_COLUMNS[field]} = ${p.add(filter[field]!)}::text`).join(" AND ");
  const walkRange = `${filter.popupId === undefined ? "" : ` AND w.popup_id = ${p.add(filter.popupId)}::text`}${rangeConditions("w", filter, p, order, after)}`;
  const walkOthers = equalityConditions("scanned", filter, p, others);
  const tupleRange = rangeConditions("k", filter, p, order, after);
  return `WITH counts AS MATERIALIZED (
      SELECT COALESCE(SUM(c.n), 0) AS range_rows, COALESCE(SUM(c.n) FILTER (WHERE ${matching}), 0) AS matching,
        COUNT(*) FILTER (WHERE ${matching} AND c.n > 0) AS tuples
      FROM submission_counts c WHERE c.account_id = ${account}${popup}),
    walk AS MATERIALIZED (
      SELECT CASE WHEN matching > 0 AND ${depthParameter} * range_rows <= matching * tuples * (${depthParameter} + ${MERGE_SEEK_ROWS})
        THEN ceil(${WALK_SLACK} * ${depthParameter} * range_rows::float8 / matching)::bigint ELSE 0 END AS reads
      FROM counts),
    walked AS MATERIALIZED (
      SELECT ${SUBMISSION_COLUMNS} FROM (
        SELECT w.* FROM submissions w WHERE w.account_id = ${account}${walkRange}
        ORDER BY w.created_at ${direction}, w.id ${direction} LIMIT (SELECT reads FROM walk)) AS scanned
      WHERE true${walkOthers}
      ORDER BY created_at ${direction}, id ${direction} LIMIT ${depthParameter}),
    walk_found AS MATERIALIZED (SELECT COUNT(*) = ${depthParameter} AS found FROM walked),
    merged AS (
      SELECT m.id FROM submission_counts c CROSS JOIN LATERAL (
        SELECT k.created_at, k.id FROM submissions k
        WHERE k.account_id = c.account_id AND k.popup_id = c.popup_id AND k.domain = c.domain AND k.device = c.device AND k.status = c.status${tupleRange}
        ORDER BY k.created_at ${direction}, k.id ${direction} LIMIT ${depthParameter}) AS m
      WHERE c.account_id = ${account}${popup} AND ${matching} AND c.n > 0 AND NOT (SELECT found FROM walk_found)
      ORDER BY m.created_at ${direction}, m.id ${direction} LIMIT ${depthParameter})
    SELECT ${SUBMISSION_COLUMNS} FROM walked WHERE (SELECT found FROM walk_found)
    UNION ALL
    SELECT ${SUBMISSION_COLUMNS.split(", ").map((column) => `s.${column}`).join(", ")} FROM merged JOIN submissions s ON s.account_id = ${account} AND s.id = merged.id`;
}

/**
 * The total of a list: a sum of the maintained counts when only equality filters apply; with
 * dates, a count over the matching index range, or with domain, device or status filters the
 * sum of a count over each matching tuple's range.
 */
function totalStatement(accountId: string, filter: SubmissionFilter, p: Parameters): string {
  if (!isDated(filter)) {
    return `SELECT COALESCE(SUM(c.n), 0) FROM submission_counts c WHERE c.account_id = ${p.add(accountId)}${equalityConditions("c", filter, p, EQUALITY_FIELDS)}`;
  }
  if (tupleFilters(filter).length === 0) {
    return `SELECT COUNT(*) FROM submissions s WHERE s.account_id = ${p.add(accountId)}${equalityConditions("s", filter, p, EQUALITY_FIELDS)}${rangeConditions("s", filter, p, "asc")}`;
  }
  return `SELECT COALESCE(SUM(m.n), 0) FROM submission_counts c CROSS JOIN LATERAL (
      SELECT COUNT(*) AS n FROM submissions k
      WHERE k.account_id = c.account_id AND k.popup_id = c.popup_id AND k.domain = c.domain AND k.device = c.device AND k.status = c.status${rangeConditions("k", filter, p, "asc")}) AS m
    WHERE c.account_id = ${p.add(accountId)}${equalityConditions("c", filter, p, EQUALITY_FIELDS)} AND c.n > 0`;
}

const EQUALITY_FIELDS = Object.keys(EQUALITY_COLUMNS) as (keyof typeof EQUALITY_COLUMNS)[];

/**
 * One statement, so one snapshot: the total in every row (`totalStatement`) and the page's
 * columns; a page with no rows is one row of NULLs.
 */
export function listStatement(accountId: string, query: SubmissionQuery): { text: string; args: Value[] } {
  const direction = query.order === "asc" ? "ASC" : "DESC";
  const p = new Parameters();
  const total = totalStatement(accountId, query, p);
  let page: string;
  if (tupleFilters(query).length === 0) {
    page = `SELECT ${SUBMISSION_COLUMNS} FROM submissions s
      WHERE s.account_id = ${p.add(accountId)}${equalityConditions("s", query, p, EQUALITY_FIELDS)}${rangeConditions("s", query, p, query.order)}`;
  } else {
    page = walkOrMerge(accountId, query, p, query.order, query.offset + query.limit);
  }
  return {
    text: `SELECT (${total})::float8 AS total, page.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (
             SELECT * FROM (${page}) AS rows
             ORDER BY created_at ${direction}, id ${direction} LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}) AS page ON true`,
    args: p.values,
  };
}

/**
 * The page after `walk.after`: a row comparison on (created_at, id), which PostgreSQL reads as a
 * range of the filter's index, however deep the page (with domain, device or status filters,
 * of each matching tuple's range: `walkOrMerge`).
 */
export function walkStatement(accountId: string, walk: SubmissionWalk): { text: string; args: Value[] } {
  const filter = withoutBoundBehind(walk);
  const direction = walk.order === "asc" ? "ASC" : "DESC";
  const p = new Parameters();
  if (tupleFilters(filter).length > 0) {
    const page = walkOrMerge(accountId, filter, p, walk.order, walk.limit, walk.after);
    return { text: `SELECT * FROM (${page}) AS rows ORDER BY created_at ${direction}, id ${direction} LIMIT ${p.add(walk.limit)}`, args: p.values };
  }
  const where = `s.account_id = ${p.add(accountId)}${equalityConditions("s", filter, p, EQUALITY_FIELDS)}${rangeConditions("s", filter, p, walk.order, walk.after)}`;
  return {
    text: `SELECT ${SUBMISSION_COLUMNS} FROM submissions s WHERE ${where} ORDER BY created_at ${direction}, id ${direction} LIMIT ${p.add(walk.limit)}`,
    args: p.values,
  };
}
