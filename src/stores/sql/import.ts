/**
 * The bulk insert behind imports: the rows go to SQLite as JSON arrays of rows, cut to the size
 * D1 allows a bound value, one statement per array (a few per thousand rows, rather than one per
 * handful of rows under D1's 100 bound values per statement), and the chunk's data keys worked
 * out here, once per distinct (popup, key), rather than by SQLite from every row's JSON.
 */
import type { Submission } from "../../submission.ts";
import type { SqlStatement } from "./driver.ts";
import { jsonArrayChunks } from "./json-chunks.ts";
import { SUBMISSION_COLUMN_COUNT, SUBMISSION_COLUMNS, submissionToRow } from "./submission-row.ts";

const INSERT_SQL = `INSERT INTO submissions (account_id, ${SUBMISSION_COLUMNS})
  SELECT ?, ${Array.from({ length: SUBMISSION_COLUMN_COUNT }, (_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?) WHERE true
  ON CONFLICT (account_id, id) DO NOTHING RETURNING 1 AS inserted`;

// The chunk's distinct data keys, as one JSON array of [popupId, key] pairs.
const KEYS_SQL = `INSERT OR IGNORE INTO submission_data_keys (account_id, popup_id, key)
  SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)`;

/**
 * Statements that insert `submissions` into the account, skipping ids it already has: first
 * the row inserts, each returning a row per row inserted (not `rowsAffected`, which D1 counts
 * with the rows its triggers change), then the data keys.
 */
export function importStatements(accountId: string, submissions: readonly Submission[]): { statements: SqlStatement[]; rowStatements: number } {
  const rows = submissions.map((s) => JSON.stringify(submissionToRow(s)));
  const statements: SqlStatement[] = jsonArrayChunks(rows).map((chunk) => ({ sql: INSERT_SQL, args: [accountId, chunk] }));
  const rowStatements = statements.length;
  statements.push(...dataKeyStatements(accountId, submissions));
  return { statements, rowStatements };
}

function dataKeyStatements(accountId: string, submissions: readonly Submission[]): SqlStatement[] {
  const keysByPopup = new Map<string, Set<string>>();
  for (const s of submissions) {
    let keys = keysByPopup.get(s.popupId);
    if (keys === undefined) keysByPopup.set(s.popupId, (keys = new Set()));
    for (const key in s.data) keys.add(key);
  }
  const pairs = [...keysByPopup].flatMap(([popupId, keys]) => [...keys].map((key) => JSON.stringify([popupId, key])));
  return jsonArrayChunks(pairs).map((chunk) => ({ sql: KEYS_SQL, args: [accountId, chunk] }));
}
