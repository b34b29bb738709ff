/**
 * A submission as a row of the `submissions` table, both ways: the one mapping every read and
 * write of the SQL store goes through (list, get, walk, export, insert, import). A field of
 * `Submission` is one entry of FIELDS, plus the migration that adds its column.
 */
import { formatInstant } from "../../instant.ts";
import type { Submission } from "../../submission.ts";
import type { SqlValue } from "./driver.ts";

interface Field {
  key: keyof Submission;
  column: string;
  /** text: as it is; json: JSON text of any value; time: epoch milliseconds, ISO 8601 in a Submission. */
  kind: "text" | "json" | "time";
  /** Absent from a Submission when the column is NULL. */
  optional?: true;
}

/**
 * In the key order of `Submission`, which is the order `JSON.stringify` writes them in; a field
 * added later goes last, where the memory store puts it too.
 */
const FIELDS: readonly Field[] = [
  { key: "submissionId", column: "id", kind: "text" },
  { key: "popupId", column: "popup_id", kind: "text" },
  { key: "data", column: "data", kind: "json" },
  { key: "domain", column: "domain", kind: "text" },
  { key: "userAgent", column: "user_agent", kind: "text" },
  { key: "device", column: "device", kind: "text" },
  { key: "status", column: "status", kind: "text" },
  { key: "createdAt", column: "created_at", kind: "time" },
];

/** The columns of a submission, in the order of `rowToSubmission`'s row and `submissionToRow`'s values. */
export const SUBMISSION_COLUMNS = FIELDS.map((field) => field.column).join(", ");

export const SUBMISSION_COLUMN_COUNT = FIELDS.length;

/** A row of SUBMISSION_COLUMNS, read as an array (`asArrays`), as a Submission. */
export function rowToSubmission(row: readonly unknown[]): Submission {
  const submission: Record<string, unknown> = {};
  for (let i = 0; i < FIELDS.length; i++) {
    const { key, kind, optional } = FIELDS[i]!;
    const value = row[i];
    if (optional && value === null) continue;
    submission[key] = kind === "text" ? String(value) : kind === "json" ? JSON.parse(String(value)) : formatInstant(Number(value));
  }
  return submission as unknown as Submission;
}

/** The values of SUBMISSION_COLUMNS for a submission, for every INSERT. */
export function submissionToRow(submission: Submission): SqlValue[] {
  return FIELDS.map(({ key, kind }) => {
    const value = submission[key];
    if (value === undefined) return null;
    return kind === "text" ? String(value) : kind === "json" ? JSON.stringify(value) : Date.parse(String(value));
  });
}

// bench/export.ts: NDJSON >= 200k rows/s needs SQLite to write each line, not JavaScript to parse and re-serialise it.
/**
 * The text `JSON.stringify(rowToSubmission(row))` gives, written by SQLite, which escapes
 * strings as JSON.stringify does. `data` goes in as stored (JSON.stringify wrote it, without
 * line breaks); a row edited by hand to hold one is re-serialised, as NDJSON needs one line.
 */
export const SUBMISSION_JSON = submissionJson((column) => column);

/** SUBMISSION_JSON with each column read through `columnOf` (to qualify it, or to take a field from elsewhere). */
export function submissionJson(columnOf: (column: string) => string): string {
  return submissionJsonParts(columnOf).join(" || ");
}

/** The SQL texts whose concatenation is `submissionJson(columnOf)`, for SQLite's `concat()`. */
export function submissionJsonParts(columnOf: (column: string) => string): string[] {
  return ["'{'", ...FIELDS.flatMap((field, i) => jsonMemberParts(field, i, columnOf)), "'}'"];
}

// bench/http.ts (list and get): SQLite's strftime costs more than all the rest of a row's JSON.
/**
 * SUBMISSION_JSON in two texts around the value of `createdAt`, which `joinAroundTime` writes
 * from the row's `created_at` (as `rowToSubmission` does): `head` ends with `"createdAt":`,
 * `tail` holds the fields after it and the closing brace.
 */
export const SUBMISSION_JSON_AROUND_TIME = (() => {
  const time = FIELDS.findIndex((field) => field.kind === "time");
  const { key, optional } = FIELDS[time]!;
  if (optional) throw new Error("the time written outside SQLite must be present in every row");
  const members = (from: number, to: number) => FIELDS.slice(from, to).map((field, i) => ` || ${jsonMember(field, from + i, (column) => column)}`).join("");
  return { head: `'{'${members(0, time)} || '${time === 0 ? "" : ","}"${key}":'`, tail: `''${members(time + 1, FIELDS.length)} || '}'` };
})();

/** A submission's JSON text from the row's `head`, `created_at` and `tail` (SUBMISSION_JSON_AROUND_TIME). */
export function joinAroundTime(head: unknown, createdAt: unknown, tail: unknown): string {
  return `${String(head)}"${formatInstant(Number(createdAt))}"${String(tail)}`;
}

function jsonMember(field: Field, i: number, columnOf: (column: string) => string): string {
  return jsonMemberParts(field, i, columnOf).join(" || ");
}

function jsonMemberParts(field: Field, i: number, columnOf: (column: string) => string): string[] {
  const name = `${i === 0 ? "" : ","}"${field.key}":`;
  const column = columnOf(field.column);
  const value =
    field.kind === "text"
      ? `json_quote(${column})`
      : field.kind === "json"
        ? `(CASE WHEN instr(${column}, char(10)) OR instr(${column}, char(13)) THEN json(${column}) ELSE ${column} END)`
        : `'"' || strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch') || '"'`;
  return field.optional ? [`(CASE WHEN ${column} IS NULL THEN '' ELSE '${name}' || ${value} END)`] : [`'${name}'`, value];
}
