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

/** The WHERE clause of a filter, its parameters numbered from `$1` (the account). */
function whereClause(accountId: string, filter: SubmissionFilter): { where: string; args: Value[] } {
  const args: Value[] = [accountId];
  const conditions = ["account_id = $1"];
  for (const [field, column] of Object.entries(EQUALITY_COLUMNS)) {
    const value = filter[field as keyof typeof EQUALITY_COLUMNS];
    if (value === undefined) continue;
    args.push(value);
    conditions.push(`${column} = $${args.length}`);
  }
  // Whole milliseconds in the column: t > x exactly when t > floor(x), t < x when t < ceil(x).
  if (filter.createdAfter !== undefined) {
    args.push(Math.floor(filter.createdAfter));
    conditions.push(`created_at > $${args.length}::bigint`);
  }
  if (filter.createdBefore !== undefined) {
    args.push(Math.ceil(filter.createdBefore));
    conditions.push(`created_at < $${args.length}::bigint`);
  }
  return { where: conditions.join(" AND "), args };
}

const isDated = (filter: SubmissionFilter) => filter.createdAfter !== undefined || filter.createdBefore !== undefined;

/**
 * One statement, so one snapshot: the total in every row (a sum of the maintained counts when
 * only equality filters apply, else a count over the matching index range) and the page's
 * columns; a page with no rows is one row of NULLs.
 */
export function listStatement(accountId: string, query: SubmissionQuery): { text: string; args: Value[] } {
  const { where, args } = whereClause(accountId, query);
  const direction = query.order === "asc" ? "ASC" : "DESC";
  // Without dates the WHERE clause names only columns submission_counts has too.
  const total = isDated(query) ? `SELECT COUNT(*) FROM submissions WHERE ${where}` : `SELECT COALESCE(SUM(n), 0) FROM submission_counts WHERE ${where}`;
  args.push(query.limit, query.offset);
  return {
    text: `SELECT (${total})::float8 AS total, page.* FROM (SELECT 1) AS one LEFT JOIN LATERAL (
             SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${where}
             ORDER BY created_at ${direction}, id ${direction} LIMIT $${args.length - 1} OFFSET $${args.length}) AS page ON true`,
    args,
  };
}

/**
 * The page after `walk.after`: a row comparison on (created_at, id), which PostgreSQL reads as a
 * range of the filter's index, however deep the page.
 */
export function walkStatement(accountId: string, walk: SubmissionWalk): { text: string; args: Value[] } {
  const { where, args } = whereClause(accountId, withoutBoundBehind(walk));
  const [direction, comparison] = walk.order === "asc" ? ["ASC", ">"] : ["DESC", "<"];
  let after = "";
  if (walk.after && Number.isInteger(walk.after.createdAt)) {
    args.push(walk.after.createdAt, walk.after.submissionId);
    after = ` AND (created_at, id) ${comparison} ($${args.length - 1}::bigint, $${args.length}::text)`;
  } else if (walk.after) {
    // A cursor inside a millisecond: every row of the millisecond before (or after) is past it.
    args.push(walk.order === "asc" ? Math.floor(walk.after.createdAt) : Math.ceil(walk.after.createdAt));
    after = ` AND created_at ${comparison} $${args.length}::bigint`;
  }
  args.push(walk.limit);
  return {
    text: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE ${where}${after} ORDER BY created_at ${direction}, id ${direction} LIMIT $${args.length}`,
    args,
  };
}
