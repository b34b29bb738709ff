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

/** Milliseconds from 0000-01-01 to the epoch: a whole number of days. */
const YEAR_ZERO_MS = 62_167_219_200_000;

/** The columns of a submission, in the order of `rowToSubmission`'s row (and the first of `submissionToRow`'s values). */
export const SUBMISSION_COLUMNS = FIELDS.map((field) => field.column).join(", ");

/**
 * Set by every write of a row (`submissionToRow`) when none of its text fields holds a
 * character JSON escapes (a quote, a backslash, a control character: `holdsJsonEscape`), so that
 * SQLite may write them between quotes as they are; 0 when one does, NULL when not known (a row
 * inserted by hand): then they are quoted. Migration 16 set it on the rows before it, and
 * recomputes it when one of those fields is updated.
 */
const PLAIN_TEXT_COLUMN = "plain_text";

/** The columns every INSERT of a submission writes, in the order of `submissionToRow`'s values: SUBMISSION_COLUMNS and the row's PLAIN_TEXT_COLUMN. */
export const SUBMISSION_ROW_COLUMNS = `${SUBMISSION_COLUMNS}, ${PLAIN_TEXT_COLUMN}`;

export const SUBMISSION_ROW_COLUMN_COUNT = SUBMISSION_ROW_COLUMNS.split(", ").length;

/** A row of SUBMISSION_COLUMNS, read as an array (`asArrays`), as a Submission. */
export function rowToSubmission(row: readonly unknown[]): Submission {
  return toSubmission(row, (data) => JSON.parse(String(data)));
}

/** `row`'s values in FIELDS order as a Submission, `data` read by `readData`; a NULL optional field is left out. */
function toSubmission(row: readonly unknown[], readData: (value: unknown) => unknown): Submission {
  const submission: Record<string, unknown> = {};
  for (let i = 0; i < FIELDS.length; i++) {
    const { key, kind, optional } = FIELDS[i]!;
    const value = row[i];
    if (optional && value === null) continue;
    submission[key] = kind === "text" ? String(value) : kind === "json" ? readData(value) : formatInstant(Number(value));
  }
  return submission as unknown as Submission;
}

// bench/export.ts: CSV >= 200k rows/s needs a page read as one JSON text that parses once.
/**
 * SUBMISSION_COLUMNS as one JSON array, written by SQLite with `data` as its JSON text (not a
 * string holding it, which the reader would parse a second time) and the time as epoch
 * milliseconds: `JSON.parse` of it is what `arrayToSubmission` takes. A NULL optional column is
 * `null`.
 */
export const SUBMISSION_ARRAY = plainOrQuoted(
  (column) => column,
  () => true,
  ({ plain }) => jsonText({
    format: `[${FIELDS.map(({ column, kind }) => (kind === "text" && plain?.(column) ? '"%s"' : "%s")).join(",")}]`,
    values: FIELDS.map(({ column, kind }) => (kind !== "text" ? `COALESCE(${column}, 'null')` : plain?.(column) ? column : `json_quote(${column})`)),
  }),
);

// bench/export.ts (CSV): JavaScript parsing a row's fields one by one, and making a Submission of them, cost more than SQLite joining those a CSV record writes side by side.
/**
 * A row for a CSV export as five JSON values (`CsvPartsPage` in store.ts): `id,popup_id,domain,`
 * joined, `user_agent`, `device,status,` joined, the time (epoch milliseconds) and `data`. A row
 * whose text fields may hold a character JSON escapes (PLAIN_TEXT_COLUMN not set) has "", "",
 * "", its time and its SUBMISSION_ARRAY instead. Whether the first value splits into its three
 * fields (none holds a comma) is the reader's to check (store.ts, `csvPartsPagePlace`): SQLite's
 * `instr` of each cost more than JavaScript's look at the joined text.
 */
export const SUBMISSION_CSV_PARTS = `(CASE WHEN ${PLAIN_TEXT_COLUMN}
  THEN printf('"%s,%s,%s,","%s","%s,%s,",%d,%s', id, popup_id, domain, user_agent, device, status, created_at, COALESCE(data, 'null'))
  ELSE printf('"","","",%d,%s', created_at, ${SUBMISSION_ARRAY}) END)`;

/** Where a parsed SUBMISSION_ARRAY holds the row's cursor: its time (epoch milliseconds) and its id. */
export const SUBMISSION_ARRAY_CURSOR = {
  createdAt: FIELDS.findIndex((field) => field.column === "created_at"),
  submissionId: FIELDS.findIndex((field) => field.column === "id"),
};

// bench/export.ts (CSV): an object literal costs less a row than setting FIELDS' keys one by one.
/**
 * A parsed SUBMISSION_ARRAY as a Submission: what `rowToSubmission` gives for the same row (its
 * `data` already parsed), written out field by field in FIELDS' order. A field added to FIELDS
 * goes here too: the stores' conformance suite compares these objects, stringified, with the
 * lines SQLite writes from FIELDS (walkSubmissionsAsJson).
 */
export function arrayToSubmission(row: readonly unknown[]): Submission {
  return {
    submissionId: String(row[0]),
    popupId: String(row[1]),
    data: row[2] as Submission["data"],
    domain: String(row[3]),
    userAgent: String(row[4]),
    device: String(row[5]) as Submission["device"],
    status: String(row[6]) as Submission["status"],
    createdAt: formatInstant(Number(row[7])),
  };
}

/** The values of SUBMISSION_ROW_COLUMNS for a submission, for every INSERT. */
export function submissionToRow(submission: Submission): SqlValue[] {
  let plain = 1;
  const values = FIELDS.map(({ key, kind }) => {
    const value = submission[key];
    if (value === undefined) return null;
    if (kind !== "text") return kind === "json" ? JSON.stringify(value) : Date.parse(String(value));
    const text = String(value);
    if (holdsJsonEscape(text)) plain = 0;
    return text;
  });
  return [...values, plain];
}

/**
 * Whether SQLite's `json_quote` (and JSON.stringify) would escape a character of `text`: a
 * quote, a backslash or a control character. Without one, `json_quote(x)` is `'"' || x || '"'`
 * (migration 16 tests a row's fields by that equality; the SQL store's tests compare the two for
 * every character of the Basic Multilingual Plane).
 */
export function holdsJsonEscape(text: string): boolean {
  return JSON_ESCAPED.test(text);
}

const JSON_ESCAPED = /["\\\u0000-\u001f]/;

// bench/export.ts: NDJSON >= 200k rows/s needs SQLite to write each line, not JavaScript to parse and re-serialise it.
/**
 * The text `JSON.stringify(rowToSubmission(row))` gives, written by SQLite, which escapes
 * strings as JSON.stringify does, and a line feed: a line of NDJSON. `data` goes in as stored
 * (JSON.stringify wrote it, without line breaks); a row edited by hand to hold one is
 * re-serialised, as NDJSON needs one line.
 */
export const SUBMISSION_LINE = submissionLine();

// bench/export.ts (NDJSON): looking for line breaks in every row's data cost SQLite more than any other value of the line.
/**
 * SUBMISSION_LINE with `data` as stored, not looked at for raw line breaks: the reader checks
 * the page instead (store.ts, `oneLinePerRow`) and reads SUBMISSION_LINE for a page where a
 * row edited by hand holds one.
 */
export const SUBMISSION_LINE_AS_STORED = submissionLine({ dataAsStored: true });

function submissionLine(options: MemberOptions = {}): string {
  return plainOrQuoted((column) => column, () => true, (plainOptions) => {
    const all = members(0, FIELDS.length, (column) => column, { ...options, ...plainOptions });
    return jsonText({ format: `{${all.format}}\n`, values: all.values });
  });
}

// bench/export.ts (NDJSON) and bench/events.ts: json_quote of the text fields cost SQLite more than any other value of the line.
/**
 * `text` of a row in a CASE on its PLAIN_TEXT_COLUMN (read through `columnOf`): where it is set,
 * with the text columns `plain` names written between quotes as they are, which gives the
 * same bytes as `json_quote` for text without a character JSON escapes; else with all quoted.
 * SQLite writes one of the two for each row.
 */
function plainOrQuoted(columnOf: (column: string) => string, plain: (column: string) => boolean, text: (options: Pick<MemberOptions, "plain">) => string): string {
  const [plainText, quoted] = [text({ plain }), text({})];
  // without a text column (a part of a text, jsonAroundTime) the two are the same
  return plainText === quoted ? quoted : `(CASE WHEN ${columnOf(PLAIN_TEXT_COLUMN)} THEN ${plainText} ELSE ${quoted} END)`;
}

/**
 * SUBMISSION_LINE's JSON text (without the line feed) with each column read through
 * `columnOf` (to qualify it, or to take a field from elsewhere); with `within`, written in the same printf after the text of the SQL
 * expression `within.before` and followed by the literal `within.after` (a created event around
 * its data), the text columns `within.plain` names written as they are where the row's
 * PLAIN_TEXT_COLUMN is set (`plainOrQuoted`), and `data` as stored with `within.dataAsStored`.
 */
export function submissionJson(
  columnOf: (column: string) => string,
  within?: { before: string; after: string; plain: (column: string) => boolean; dataAsStored?: true },
): string {
  if (!within) {
    const all = members(0, FIELDS.length, columnOf);
    return jsonText({ format: `{${all.format}}`, values: all.values });
  }
  return plainOrQuoted(columnOf, within.plain, (options) => {
    const all = members(0, FIELDS.length, columnOf, { ...options, dataAsStored: within.dataAsStored });
    return jsonText({ format: `%s{${all.format}}${within.after}`, values: [within.before, ...all.values] });
  });
}

// bench/export.ts: a row's JSON text as one printf, not a concatenation per member.
/**
 * `members` (a JSON text with `%s` for each value) as one SQL expression: SQLite's printf writes
 * the text once, where `||` makes and copies a new string for every member.
 */
function jsonText({ format, values }: { format: string; values: string[] }): string {
  return values.length === 0 ? `'${format}'` : `printf('${format}', ${values.join(", ")})`;
}

/** FIELDS[from, to) as JSON members: the printf format (the members, `%s` for values) and its values. */
function members(from: number, to: number, columnOf: (column: string) => string, options: MemberOptions = {}): { format: string; values: string[] } {
  let format = "";
  const values: string[] = [];
  for (let i = from; i < to; i++) {
    const member = jsonMember(FIELDS[i]!, i, columnOf, options);
    format += member.format;
    values.push(...member.values);
  }
  return { format, values };
}

/** What stands on each side of the time in SUBMISSION_JSON_TIME_APART: a control character, which JSON text never holds raw. */
const TIME_MARK = "\x1f";

// bench/http.ts (list and get): formatting the time in SQLite costs more than in JavaScript,
// which keeps the date from row to row; and each value the binding hands over costs it more than
// SQLite's writing the time's marks into the text.
/**
 * SUBMISSION_LINE's JSON text with the value of `createdAt` left for `joinTimeApart` to write from
 * the row's `created_at` (as `rowToSubmission` does): in its place, the epoch milliseconds
 * between two TIME_MARKs.
 */
export const SUBMISSION_JSON_TIME_APART = jsonTimeApart();

// bench/http.ts (list): looking for line breaks in every row's data cost SQLite more than JavaScript's look at the page's text.
/**
 * SUBMISSION_JSON_TIME_APART with `data` as stored, not looked at for raw line breaks: the
 * reader looks for them in the texts it got (`holdsLineBreak`) and, when a row edited by hand
 * holds one, reads SUBMISSION_JSON_TIME_APART instead.
 */
export const SUBMISSION_JSON_TIME_APART_AS_STORED = jsonTimeApart({ dataAsStored: true });

// bench/http.ts (list and get): json_quote of the text fields cost SQLite more than any other value of the texts.
/** The text in a CASE on the row's PLAIN_TEXT_COLUMN (`plainOrQuoted`), as SUBMISSION_ARRAY. */
function jsonTimeApart(options: MemberOptions = {}): string {
  const time = FIELDS.findIndex((field) => field.kind === "time");
  const { key, column, optional } = FIELDS[time]!;
  if (optional) throw new Error("the time written outside SQLite must be present in every row");
  return plainOrQuoted((name) => name, () => true, (plainOptions) => {
    const before = members(0, time, (name) => name, { ...options, ...plainOptions });
    const after = members(time + 1, FIELDS.length, (name) => name, { ...options, ...plainOptions });
    const format = `{${before.format}${time === 0 ? "" : ","}"${key}":${TIME_MARK}%d${TIME_MARK}${after.format}}`;
    return jsonText({ format, values: [...before.values, column, ...after.values] });
  });
}

/**
 * True when a text written with a row's data as stored (SUBMISSION_JSON_TIME_APART_AS_STORED,
 * a page of the change log: several joined, as text or as its UTF-8 bytes) holds a raw line
 * break: only a row's data as stored can, edited by hand, and JSON.stringify's text of it holds
 * none. Bytes are searched by `indexOf` of a number, which on a Node Buffer (the libSQL
 * binding's BLOB) is a native search.
 */
export function holdsLineBreak(text: string | Uint8Array): boolean {
  if (typeof text === "string") return text.includes("\n") || text.includes("\r");
  return text.indexOf(10) !== -1 || text.indexOf(13) !== -1;
}

/**
 * A submission's JSON text from its SUBMISSION_JSON_TIME_APART, the time written as
 * `formatInstant` writes it; `times`, when given, gets the time's epoch milliseconds. The marks
 * are found from the end, past which only the fields after the time stand: a row's data edited
 * by hand into text that is not JSON may hold anything, but it comes before the time. Throws
 * for a text without them (a page split where such data held the character that joins it).
 */
export function joinTimeApart(text: string, times?: number[]): string {
  const end = text.lastIndexOf(TIME_MARK);
  const start = end <= 0 ? -1 : text.lastIndexOf(TIME_MARK, end - 1);
  if (start === -1) throw new Error("the database returned a submission's text without its time");
  const createdAt = Number(text.slice(start + 1, end));
  times?.push(createdAt);
  return `${text.slice(0, start)}"${formatInstant(createdAt)}"${text.slice(end + 1)}`;
}

/** The first member of every submission's JSON text (FIELDS' order), up to its value: `submissionIdOf` reads the value there. */
const ID_MEMBER = `{"${FIELDS[0]!.key}":`;
if (FIELDS[0]!.key !== "submissionId" || FIELDS[0]!.kind !== "text" || FIELDS[0]!.optional) throw new Error("a submission's JSON text must begin with its id");

// bench/http.ts (list): the ids aggregated apart cost SQLite more than this reading of the one
// a list needs (its last row's, and the rows' whose times tie).
/**
 * The submission id in a JSON text SQLite wrote for a row (SUBMISSION_JSON_TIME_APART, before
 * or after `joinTimeApart`): its first member, a JSON string, as JSON.parse reads it.
 */
export function submissionIdOf(text: string): string {
  const open = ID_MEMBER.length;
  let close = text.indexOf('"', open + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) break;
    close = text.indexOf('"', close + 1);
  }
  const quoted = text.slice(open, close + 1);
  return quoted.includes("\\") ? (JSON.parse(quoted) as string) : quoted.slice(1, -1);
}

interface MemberOptions {
  /** A JSON field's text as stored, even with raw line breaks (SUBMISSION_LINE_AS_STORED). */
  dataAsStored?: true;
  /** The text columns written between quotes as they are, not by `json_quote`: for a row whose PLAIN_TEXT_COLUMN is set (`plainOrQuoted`). */
  plain?: (column: string) => boolean;
}

/**
 * A field as a JSON member: its part of a printf format (`%s` where a value goes) and the SQL
 * expressions of its values. An optional field's member is all `%s`: empty when the column is NULL.
 */
function jsonMember(field: Field, i: number, columnOf: (column: string) => string, { dataAsStored, plain }: MemberOptions): { format: string; values: string[] } {
  const name = `${i === 0 ? "" : ","}"${field.key}":`;
  const column = columnOf(field.column);
  const { format, values } =
    field.kind === "text"
      ? plain?.(field.column)
        ? { format: '"%s"', values: [column] }
        : { format: "%s", values: [`json_quote(${column})`] }
      : field.kind === "json"
        ? { format: "%s", values: [dataAsStored ? column : `(CASE WHEN instr(${column}, char(10)) OR instr(${column}, char(13)) THEN json(${column}) ELSE ${column} END)`] }
        : isoTime(column);
  return field.optional
    ? { format: "%s", values: [`(CASE WHEN ${column} IS NULL THEN '' ELSE '${name}' || printf('${format}', ${values.join(", ")}) END)`] }
    : { format: `${name}${format}`, values };
}

// bench/export.ts (NDJSON): strftime's `%f` costs about as much as all the row's other values.
/**
 * The epoch milliseconds in `column` as `formatInstant` writes them (years 0 to 9999), quoted:
 * the date by SQLite's `date`, the time of day by integer arithmetic. Counted from year 0, so
 * that SQLite's division, which truncates, floors as `formatInstant` does for times before 1970.
 */
function isoTime(column: string): { format: string; values: string[] } {
  const sinceYearZero = `(${column} + ${YEAR_ZERO_MS})`;
  return {
    format: '"%sT%02d:%02d:%02d.%03dZ"',
    values: [
      `date(${sinceYearZero} / 86400000 * 86400 - ${YEAR_ZERO_MS / 1000}, 'unixepoch')`,
      `${sinceYearZero} % 86400000 / 3600000`,
      `${sinceYearZero} % 3600000 / 60000`,
      `${sinceYearZero} % 60000 / 1000`,
      `${sinceYearZero} % 1000`,
    ],
  };
}
