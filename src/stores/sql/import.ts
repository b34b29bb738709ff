/**
 * The bulk insert behind imports: as many rows per statement as fit in the 100 bound values D1
 * allows a statement, every statement of a chunk in one batch, and the chunk's data keys worked out
 * here, once per distinct (popup, key), rather than by SQLite from every row's JSON.
 */
import type { Submission } from "../../submission.ts";
import type { SqlStatement, SqlValue } from "./driver.ts";
import { jsonArrayChunks } from "./json-chunks.ts";
import { SUBMISSION_COLUMN_COUNT, SUBMISSION_COLUMNS, submissionToRow } from "./submission-row.ts";

const MAX_BOUND_VALUES = 100;
const COLUMN_COUNT = SUBMISSION_COLUMN_COUNT + 1; // and account_id
const ROWS_PER_STATEMENT = Math.floor(MAX_BOUND_VALUES / COLUMN_COUNT);

const insertSql = (rows: number) =>
  `INSERT INTO submissions (account_id, ${SUBMISSION_COLUMNS}) VALUES ${Array(rows).fill(`(${Array(COLUMN_COUNT).fill("?").join(", ")})`).join(", ")}
  ON CONFLICT (account_id, id) DO NOTHING RETURNING 1 AS inserted`;
const FULL_INSERT_SQL = insertSql(ROWS_PER_STATEMENT);

// The chunk's distinct data keys, as one JSON array of [popupId, key] pairs.
const KEYS_SQL = `INSERT OR IGNORE INTO submission_data_keys (account_id, popup_id, key)
  SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)`;

/**
 * Statements that insert `submissions` into the account, skipping ids it already has: first
 * the row inserts, each returning a row per row inserted (not `rowsAffected`, which D1 counts
 * with the rows its triggers change), then the data keys.
 */
export function importStatements(accountId: string, submissions: readonly Submission[]): { statements: SqlStatement[]; rowStatements: number } {
  const statements: SqlStatement[] = [];
  for (let from = 0; from < submissions.length; from += ROWS_PER_STATEMENT) {
    const rows = submissions.slice(from, from + ROWS_PER_STATEMENT);
    const args: SqlValue[] = [];
    for (const s of rows) {
      args.push(accountId, ...submissionToRow(s));
    }
    statements.push({ sql: rows.length === ROWS_PER_STATEMENT ? FULL_INSERT_SQL : insertSql(rows.length), args });
  }
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
