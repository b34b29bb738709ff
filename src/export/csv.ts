/**
 * CSV as formsink writes and reads it (RFC 4180): comma-separated, CRLF line ends, a field
 * quoted when it holds a comma, semicolon, quote, CR or LF, quotes doubled inside. UTF-8, no byte
 * order mark. The semicolon is quoted for the spreadsheets that split on it (Excel where the
 * list separator is `;`, as in much of Europe): unquoted, `x;=1+1` would be two cells there,
 * the second a formula that the guard below never saw at the start of a cell.
 *
 * A submission is one row: its top-level fields, then one `data.<key>` column per data key.
 * Cells are written so that reading them back gives exactly what was written:
 * - against formula injection, a cell that a spreadsheet would run as a formula (it starts with
 *   `=`, `+`, `-`, `@`, their fullwidth forms, tab, CR or NUL: OWASP's list and ASVS 5's
 *   together) gets a leading `'`, and so does a cell that starts with `'`, so that a reader can
 *   always drop one; a plain number such as `-12.5` is left alone (a
 *   spreadsheet reads it as that number, which runs nothing);
 * - a data value that is a string is written as it is when it cannot be taken for anything
 *   else; `true`, `false`, `null`, numbers, arrays and objects are written as JSON, and so is a
 *   string that would read as one of those (`"1"`, `"true"`) or starts with `"`, `[` or `{`;
 *   an empty cell means the submission has no such key.
 */
import { formatInstant } from "../instant.ts";
import { rememberLatest } from "../latest-answers.ts";
import { submission as submissionSchema } from "../schemas.ts";
import { CSV_PARTS_PER_ROW } from "../store.ts";
import type { JsonValue, Submission } from "../submission.ts";

/** The contract's top-level fields as columns, in its order. */
const CONTRACT_COLUMNS: readonly string[] = ["submissionId", "popupId", "domain", "userAgent", "device", "status", "createdAt"];

/**
 * Text fields the submission schema has beyond the contract's, by name: a field added to the
 * schema is a column without a change here. An empty cell is an absent optional field.
 */
const schemaFields: readonly { key: string; kind: "required" | "optional" }[] = submissionSchema.props
  .map(({ key, kind }) => ({ key: String(key), kind }))
  .filter(({ key }) => key !== "data" && !CONTRACT_COLUMNS.includes(key));
const EXTRA_COLUMNS = schemaFields.map(({ key }) => key).sort();

/** Every field as a column, in this order; `data` follows as `data.<key>`. */
export const FIELD_COLUMNS: readonly string[] = [...CONTRACT_COLUMNS, ...EXTRA_COLUMNS];

/** The columns a CSV may leave out, or leave empty, for a submission without that field. */
export const OPTIONAL_FIELD_COLUMNS: ReadonlySet<string> = new Set(schemaFields.filter(({ kind }) => kind === "optional").map(({ key }) => key));

export const DATA_COLUMN_PREFIX = "data.";

// With the fullwidth ＝ ＋ － ＠, which some spreadsheets take for their ASCII twins.
const FORMULA_START = /^[=+\-@\t\r\0\uFF1D\uFF0B\uFF0D\uFF20]/;
/** Most cells: nothing to neutralise, nothing to quote. One test lets them through as they are. */
const PLAIN_CELL = /^(?![=+\-@\t\r\0'\uFF1D\uFF0B\uFF0D\uFF20])[^",;\r\n]*$/;
/** Strings that might read as JSON or a number: the rest are plain text without a closer look. */
const MAYBE_NOT_TEXT = /^(?:$|[-\d"[{tfn])/;
const PLAIN_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** Data cells that are JSON rather than plain text. */
const JSON_CELL = /^(?:["[{]|true$|false$|null$)/;
const NEEDS_QUOTES = /[",;\r\n]/;

/** The header row for these data keys. */
export function csvHeader(dataKeys: readonly string[]): string {
  return csvRow([...FIELD_COLUMNS, ...dataKeys.map((key) => DATA_COLUMN_PREFIX + key)]);
}

/** One submission as a row under `csvHeader(dataKeys)`. Written for speed: exports run it a million times. */
export function csvRecord(submission: Submission, dataKeys: readonly string[]): string {
  // submissionId, device, status and createdAt never need quoting or neutralising
  let row = `${submission.submissionId},${popupCells.cell(submission.popupId)},${domainCells.cell(submission.domain)},${userAgentCells.cell(submission.userAgent)},${submission.device},${submission.status},${submission.createdAt}`;
  for (const column of EXTRA_COLUMNS) {
    const value = (submission as unknown as Record<string, unknown>)[column];
    row += value === undefined ? "," : `,${cell(String(value))}`;
  }
  return `${row}${dataCells(submission.data, dataKeys)}\r\n`;
}

/**
 * Whether `csvRecordFromParts` writes every column: a store's `CsvPartsPage` holds the contract's
 * fields, none the schema has beyond them (a row without parts goes through `csvRecord`).
 */
export const PARTS_HOLD_EVERY_FIELD = EXTRA_COLUMNS.length === 0;

/** The records of a store's `CsvPartsPage` (its `entries`), one after the other. */
export function csvRecords(entries: readonly unknown[], dataKeys: readonly string[]): string {
  let records = "";
  for (let i = 0; i < entries.length; i += CSV_PARTS_PER_ROW) {
    const fields = entries[i] as string;
    records += fields === ""
      ? csvRecord(entries[i + 4] as Submission, dataKeys)
      : csvRecordFromParts(fields, entries[i + 1] as string, entries[i + 2] as string, entries[i + 3] as number, entries[i + 4] as Submission["data"], dataKeys);
  }
  return records;
}

/**
 * `csvRecord` of a row as a store's `CsvPartsPage` holds it: `fields` is
 * `${submissionId},${popupId},${domain},` (none of them holds a comma, a quote or a line break),
 * then the user agent, `${device},${status},`, the time in epoch milliseconds and the data.
 */
export function csvRecordFromParts(
  fields: string, userAgent: string, deviceAndStatus: string, createdAt: number, data: Submission["data"], dataKeys: readonly string[],
): string {
  return `${fieldCells(fields)}${userAgentCells.cell(userAgent)},${deviceAndStatus}${formatInstant(createdAt)}${dataCells(data, dataKeys)}\r\n`;
}

/**
 * The cells of `${submissionId},${popupId},${domain},` holding none of a comma, a quote or a line
 * break: the text as it is, unless the popup or the domain starts with a character the formula
 * guard may take or holds a semicolon.
 */
function fieldCells(fields: string): string {
  const popupAt = fields.indexOf(",") + 1;
  const domainAt = fields.indexOf(",", popupAt) + 1;
  if (startsUnguarded(fields.charCodeAt(popupAt)) && startsUnguarded(fields.charCodeAt(domainAt)) && !fields.includes(";")) return fields;
  const [submissionId, popupId, domain] = fields.split(",");
  return `${submissionId},${cell(popupId!)},${cell(domain!)},`;
}

/** The data's cells under `csvHeader(dataKeys)`, each after a comma. */
function dataCells(data: Submission["data"], dataKeys: readonly string[]): string {
  let row = "";
  for (let i = 0; i < dataKeys.length; i++) {
    const key = dataKeys[i]!;
    const value = data[key];
    // bench/export.ts (CSV): one lookup, not Object.hasOwn and then a lookup. A value read is
    // undefined only for a key the data lacks (JSON holds no undefined), and comes from
    // Object.prototype only as a function or as `__proto__`'s object, which hasOwn then rules out.
    if (value === undefined || ((typeof value === "function" || key === "__proto__") && !Object.hasOwn(data, key))) row += ",";
    else if (typeof value === "string") row += `,${dataTextCell(value)}`;
    else if (typeof value === "boolean") row += value ? ",true" : ",false"; // plain cells: no test needed
    else row += `,${cell(encodeDataValue(value))}`;
  }
  return row;
}

/**
 * Popups, domains and user agents repeat from row to row: their cells are looked up, not
 * worked out again (a cache of a few hundred short ones, so it stays small whatever the export).
 */
const shortRepeatedCell = rememberLatest(512, (text) => cell(text));

function repeatedCell(text: string): string {
  return text.length > 256 ? cell(text) : shortRepeatedCell(text); // a rare long one would only crowd the cache
}

// bench/export.ts (CSV): each row's texts are new strings, whose hashes a Map lookup works out
// afresh; comparing with the row before's is cheaper where they repeat in a row.
/** A column's cells by `repeatedCell`, the last one kept: consecutive rows often share a popup, a domain or a user agent. */
class RepeatedColumn {
  private text = "";
  private last = "";
  cell(text: string): string {
    if (text !== this.text) {
      this.last = repeatedCell(text);
      this.text = text;
    }
    return this.last;
  }
}

const popupCells = new RepeatedColumn();
const domainCells = new RepeatedColumn();
const userAgentCells = new RepeatedColumn();

// bench/export.ts (CSV): regular expressions cost more a cell than a look at its first character
// and a search for what needs quoting.
/**
 * `cell(encodeDataValue(text))` for a data string: most are plain text, which their first
 * character tells (MAYBE_NOT_TEXT); only the formula guard and quotes can make them more.
 */
function dataTextCell(text: string): string {
  const first = text.charCodeAt(0);
  if (text.length === 0 || (first < 0x80 && MAYBE_NOT_TEXT_START[first] === 1)) return cell(encodeDataValue(text));
  // not a number or anything JSON, so never a plain number: the guard goes on whatever FORMULA_START finds
  const guarded = (first < 0x80 ? GUARDED_START[first] === 1 : FULLWIDTH_FORMULA_START.includes(first)) ? `'${text}` : text;
  return holdsQuoted(text) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}

/** NEEDS_QUOTES: five searches for one character cost less than the regular expression. */
function holdsQuoted(text: string): boolean {
  return text.includes(",") || text.includes(";") || text.includes('"') || text.includes("\n") || text.includes("\r");
}

/** The ASCII characters that `starts` takes for a string's start, marked: read from the regular expressions, so the two cannot drift apart. */
function asciiStarts(starts: (char: string) => boolean): Uint8Array {
  const marks = new Uint8Array(0x80);
  for (let code = 0; code < 0x80; code++) marks[code] = starts(String.fromCharCode(code)) ? 1 : 0;
  return marks;
}

/** A string's first characters that MAYBE_NOT_TEXT matches. */
const MAYBE_NOT_TEXT_START = asciiStarts((char) => MAYBE_NOT_TEXT.test(char));
/** The ASCII first characters `neutralise` guards in text that is no number: FORMULA_START's, and a quote of its own. */
const GUARDED_START = asciiStarts((char) => char === "'" || FORMULA_START.test(char));
/** FORMULA_START's fullwidth ＝ ＋ － ＠. */
const FULLWIDTH_FORMULA_START: readonly number[] = [0xff1d, 0xff0b, 0xff0d, 0xff20];

/** Whether a cell starting with this character (a comma: an empty one) is never neutralised. */
function startsUnguarded(code: number): boolean {
  return code < 0x80 ? GUARDED_START[code] === 0 : !FULLWIDTH_FORMULA_START.includes(code);
}

function csvRow(cells: readonly string[]): string {
  return `${cells.map(cell).join(",")}\r\n`;
}

/** The text as a CSV cell: neutralised, then quoted if it must be. */
function cell(text: string): string {
  if (PLAIN_CELL.test(text)) return text;
  const neutralised = neutralise(text);
  return NEEDS_QUOTES.test(neutralised) ? `"${neutralised.replaceAll('"', '""')}"` : neutralised;
}

/** The cell a spreadsheet will not run: see the header of this file. */
export function neutralise(text: string): string {
  return text.startsWith("'") || (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) ? `'${text}` : text;
}

/** Undoes `neutralise`: the text of a cell as it was before writing. */
export function unneutralise(cell: string): string {
  return cell.startsWith("'") ? cell.slice(1) : cell;
}

export function encodeDataValue(value: JsonValue | undefined): string {
  if (value === undefined) return "";
  if (typeof value === "string") {
    if (!MAYBE_NOT_TEXT.test(value) || (value !== "" && !JSON_CELL.test(value) && !PLAIN_NUMBER.test(value))) return value;
    return JSON.stringify(value);
  }
  // for finite numbers, booleans and null, String() is JSON's text
  return typeof value === "object" && value !== null ? JSON.stringify(value) : String(value);
}

/** The data value of a cell (after `unneutralise`); undefined when the cell is empty. Throws a SyntaxError for bad JSON. */
export function decodeDataValue(cell: string): JsonValue | undefined {
  if (cell === "") return undefined;
  return JSON_CELL.test(cell) || PLAIN_NUMBER.test(cell) ? (JSON.parse(cell) as JsonValue) : cell;
}
