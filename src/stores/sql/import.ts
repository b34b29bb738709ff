/**
 * The bulk insert behind imports, one batch (so one transaction) per call. The rows go to
 * SQLite as JSON arrays of rows, cut to the size D1 allows a bound value, one statement per
 * array (a few per thousand rows, rather than one per handful of rows under D1's 100 bound
 * values per statement). While they go in, the insert triggers stand aside (migration 11): the
 * counts, the identifier index and the change log take the import's rows in one statement
 * each, grouped, from the rows the insert added (every rowid above the one recorded first).
 * (A group commit of creates sets the count triggers aside too, and adds its few rows' counts
 * from what it knows of them: group-counts.ts.)
 * The chunk's data keys are worked out here, once per distinct (popup, key), rather than by
 * SQLite from every row's JSON.
 */
import type { Submission } from "../../submission.ts";
import type { SqlStatement } from "./driver.ts";
import { importedEvents, newestPosition } from "./events.ts";
import { jsonArrayChunks } from "./json-chunks.ts";
import { dayOf, EQUALITY_COLUMNS } from "./counting.ts";
import { SUBMISSION_ROW_COLUMN_COUNT, SUBMISSION_ROW_COLUMNS, submissionToRow } from "./submission-row.ts";

const INSERT_SQL = `INSERT INTO submissions (account_id, ${SUBMISSION_ROW_COLUMNS})
  SELECT ?, ${Array.from({ length: SUBMISSION_ROW_COLUMN_COUNT }, (_, i) => `value ->> ${i}`).join(", ")} FROM json_each(?) WHERE true
  ON CONFLICT (account_id, id) DO NOTHING`;

// The chunk's distinct data keys, as one JSON array of [popupId, key] pairs.
const KEYS_SQL = `INSERT OR IGNORE INTO submission_data_keys (account_id, popup_id, key)
  SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)`;

/** The newest rowid before this import's rows, and the account's newest position in its log then. */
const ROWID_BEFORE = "(SELECT rowid_before FROM submission_import)";
const POSITION_BEFORE = "(SELECT position_before FROM submission_import)";
/** The rows this import inserted: a range of rowids, read straight from the table. */
const NEW_ROWS = `submissions.rowid > ${ROWID_BEFORE}`;

/**
 * What each table of counts gets from the import's rows: the count triggers' work, grouped.
 * The rows are read once, into their counts per tuple and day; every table is a sum of those.
 * Each statement's one bound value is the account's id (the import's rows are all its).
 */
const COUNT_STATEMENTS: readonly string[] = [
  `INSERT INTO submission_import_days (popup_id, domain, device, status, day, n)
    SELECT popup_id, domain, device, status, ${dayOf("created_at")}, COUNT(*) FROM submissions WHERE ${NEW_ROWS}
    GROUP BY 1, 2, 3, 4, 5`,
  `INSERT INTO submission_counts (account_id, popup_id, domain, device, status, n)
    SELECT ?, popup_id, domain, device, status, SUM(n) FROM submission_import_days WHERE true
    GROUP BY popup_id, domain, device, status
    ON CONFLICT DO UPDATE SET n = n + excluded.n`,
  `INSERT INTO submission_day_counts (account_id, day, popup_id, domain, device, status, n)
    SELECT ?, day, popup_id, domain, device, status, n FROM submission_import_days WHERE true
    ON CONFLICT DO UPDATE SET n = n + excluded.n`,
  `INSERT INTO submission_day_counts_all_popups (account_id, domain, device, status, day, n)
    SELECT ?, domain, device, status, day, SUM(n) FROM submission_import_days WHERE true
    GROUP BY domain, device, status, day
    ON CONFLICT DO UPDATE SET n = n + excluded.n`,
  ...Object.values(EQUALITY_COLUMNS).map((column) => `INSERT INTO submission_value_days (account_id, field, day, value, n)
    SELECT ?, '${column}', day, ${column}, SUM(n) FROM submission_import_days WHERE true
    GROUP BY day, ${column}
    ON CONFLICT DO UPDATE SET n = n + excluded.n`),
  "DELETE FROM submission_import_days",
];

const IDENTIFIERS_SQL = `INSERT OR IGNORE INTO submission_identifiers (account_id, field, value_key, submission_id)
  SELECT submissions.account_id, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, submissions.id
  FROM submissions, json_each(submissions.data) AS data_field JOIN identifying_fields ON identifying_fields.field = data_field.key
  WHERE ${NEW_ROWS} AND data_field.type = 'text'`;

/**
 * Statements that insert `submissions` into the account, skipping ids it already has, with
 * their counts, identifiers, created events (stamped `now`) and data keys; `inserted` is the
 * index of the statement whose one row's `inserted` is how many rows went in.
 */
export function importStatements(accountId: string, submissions: readonly Submission[], now = Date.now()): { statements: SqlStatement[]; rowStatements: number; inserted: number } {
  const rows = submissions.map((s) => JSON.stringify(submissionToRow(s)));
  const rowStatements = jsonArrayChunks(rows).map((chunk) => ({ sql: INSERT_SQL, args: [accountId, chunk] }));
  const statements: SqlStatement[] = [
    {
      sql: `INSERT INTO submission_import (rowid_before, position_before) SELECT COALESCE(MAX(rowid), 0), ${newestPosition("?")} FROM submissions`,
      args: [accountId, accountId],
    },
    ...rowStatements,
    { sql: `SELECT COUNT(*) AS inserted FROM submissions WHERE ${NEW_ROWS}` },
    ...COUNT_STATEMENTS.map((sql) => ({ sql, args: sql.includes("?") ? [accountId] : [] })),
    { sql: IDENTIFIERS_SQL },
    importedEvents(NEW_ROWS, ROWID_BEFORE, POSITION_BEFORE, now),
    ...dataKeyStatements(accountId, submissions),
    { sql: "DELETE FROM submission_import" },
  ];
  return { statements, rowStatements: rowStatements.length, inserted: rowStatements.length + 1 };
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
