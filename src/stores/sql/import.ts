/**
 * The bulk insert behind imports: many rows per statement, each statement's rows passed as one
 * JSON array parameter and unpacked by SQLite's json_each. One parameter, however many rows,
 * keeps within D1's limit of 100 bound parameters per statement, and costs one statement
 * (not one round trip) per chunk of rows.
 */
import type { Submission } from "../../submission.ts";
import type { SqlStatement } from "./driver.ts";
import { SUBMISSION_COLUMNS } from "./list-query.ts";

/**
 * Largest JSON parameter per statement, in UTF-16 units: well under the 2 MB D1 allows for a
 * value, and small enough that a statement never holds much memory.
 */
const MAX_CHUNK_LENGTH = 512 * 1024;

// The row arrays below hold the columns in SUBMISSION_COLUMNS order.
const INSERT_SQL = `INSERT INTO submissions (account_id, ${SUBMISSION_COLUMNS})
  SELECT ?, ${SUBMISSION_COLUMNS.split(", ").map((_, i) => `json_extract(value, '$[${i}]')`).join(", ")}
  FROM json_each(?) WHERE true
  ON CONFLICT (account_id, id) DO NOTHING`;

// The same rows' data keys, for the key list CSV exports take their columns from.
const KEYS_SQL = `INSERT OR IGNORE INTO submission_data_keys (account_id, popup_id, key)
  SELECT DISTINCT ?, json_extract(row.value, '$[1]'), data_key.key
  FROM json_each(?) AS row, json_each(json_extract(row.value, '$[7]')) AS data_key`;

/** Statements that insert `submissions` into the account, skipping ids it already has. */
export function importStatements(accountId: string, submissions: readonly Submission[]): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let chunk: string[] = [];
  let length = 0;
  const flush = () => {
    if (chunk.length === 0) return;
    const rows = `[${chunk.join(",")}]`;
    statements.push({ sql: INSERT_SQL, args: [accountId, rows] }, { sql: KEYS_SQL, args: [accountId, rows] });
    chunk = [];
    length = 0;
  };
  for (const s of submissions) {
    const row = JSON.stringify([
      s.submissionId, s.popupId, s.domain, s.device, s.userAgent, s.status, Date.parse(s.createdAt), JSON.stringify(s.data),
    ]);
    if (length + row.length > MAX_CHUNK_LENGTH) flush();
    chunk.push(row);
    length += row.length + 1;
  }
  flush();
  return statements;
}
