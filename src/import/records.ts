/**
 * Submissions read back from a file, validated with the very schemas and limits the API
 * applies, each with the line it came from. Three formats:
 * - `ndjson`: one Submission per line, as the export writes it;
 * - `csv`: the export's CSV (`src/export/csv.ts` says how cells are read back);
 * - `pages`: list responses (`{items, limit, offset, total}`) as saved from `GET /api/submission`
 *   of the service the seed describes, one or more per file. Their ids are lower-cased, their
 *   times written with milliseconds, and a device outside formsink's five is lower-cased or,
 *   failing that, derived from the user agent (the record says so).
 */
import { checkSubmissionData } from "../data-limits.ts";
import { deviceFromUserAgent } from "../device.ts";
import { DATA_COLUMN_PREFIX, decodeDataValue, FIELD_COLUMNS, OPTIONAL_FIELD_COLUMNS, unneutralise } from "../export/csv.ts";
import { checkJsonValue } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import { parseInstant } from "../instant.ts";
import type { Limits } from "../options.ts";
import { submission as submissionSchema } from "../schemas.ts";
import { DEVICES, type Device, type JsonValue, type Submission, type SubmissionData } from "../submission.ts";
import { validate } from "../validate.ts";
import { readCsvRows } from "./csv-reader.ts";
import { readJsonValues, readLines } from "./text-reader.ts";

export const IMPORT_FORMATS = ["ndjson", "csv", "pages"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** One record of a file: a valid submission, or what is wrong with it. */
export type ImportRecord =
  | { line: number; where?: string; submission: Submission; adjusted?: string }
  | { line: number; where?: string; error: string };

/** Nesting allowed in a record: a submission around data of `maxDataDepth` levels, plus room for a precise message. */
const RECORD_NESTING_SLACK = 16;

/** A saved list page holds at most 100 items of at most a request body each; this is far above. */
const MAX_PAGE_LENGTH = 64 * 1024 * 1024;

export async function* readSubmissions(format: ImportFormat, chunks: AsyncIterable<string>, limits: Limits): AsyncGenerator<ImportRecord> {
  if (format === "ndjson") yield* ndjsonRecords(chunks, limits);
  else if (format === "csv") yield* csvRecords(chunks, limits);
  else yield* pageRecords(chunks, limits);
}

async function* ndjsonRecords(chunks: AsyncIterable<string>, limits: Limits): AsyncGenerator<ImportRecord> {
  for await (const { line, text } of readLines(chunks)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line, error: "not valid JSON" };
      continue;
    }
    yield { line, ...checkRecord(value, limits) };
  }
}

async function* csvRecords(chunks: AsyncIterable<string>, limits: Limits): AsyncGenerator<ImportRecord> {
  let header: string[] | undefined;
  for await (const row of readCsvRows(chunks)) {
    if ("error" in row) {
      yield row;
      if (!header) return;
      continue;
    }
    if (!header) {
      const problem = headerProblem(row.cells);
      if (problem) {
        yield { line: row.line, error: problem };
        return;
      }
      header = row.cells;
      continue;
    }
    if (row.cells.length !== header.length) {
      yield { line: row.line, error: `${row.cells.length} cells where the header has ${header.length}` };
      continue;
    }
    const record: Record<string, unknown> = {};
    const data: SubmissionData = {};
    let problem: string | undefined;
    header.forEach((column, i) => {
      const cell = unneutralise(row.cells[i]!);
      if (!column.startsWith(DATA_COLUMN_PREFIX)) {
        if (cell !== "" || !OPTIONAL_FIELD_COLUMNS.has(column)) record[column] = cell;
        return;
      }
      try {
        const value = decodeDataValue(cell);
        if (value !== undefined) data[column.slice(DATA_COLUMN_PREFIX.length)] = value;
      } catch {
        problem ??= `${column} is not valid JSON (a cell that starts with ", [ or { is read as JSON)`;
      }
    });
    record.data = data;
    yield problem ? { line: row.line, error: problem } : { line: row.line, ...checkRecord(record, limits) };
  }
}

function headerProblem(columns: string[]): string | undefined {
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column)) return `the header names the column ${column} twice`;
    seen.add(column);
    if (!column.startsWith(DATA_COLUMN_PREFIX) && !FIELD_COLUMNS.includes(column)) {
      return `the header has a column ${JSON.stringify(column)} that is neither a submission field (${FIELD_COLUMNS.join(", ")}) nor data.<key>`;
    }
  }
  const missing = FIELD_COLUMNS.filter((column) => !seen.has(column) && !OPTIONAL_FIELD_COLUMNS.has(column));
  return missing.length > 0 ? `the header lacks the column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}` : undefined;
}

async function* pageRecords(chunks: AsyncIterable<string>, limits: Limits): AsyncGenerator<ImportRecord> {
  for await (const value of readJsonValues(chunks, MAX_PAGE_LENGTH)) {
    if ("error" in value) {
      yield value;
      return;
    }
    let page: unknown;
    try {
      page = JSON.parse(value.text);
    } catch {
      yield { line: value.line, error: "not valid JSON" };
      continue;
    }
    if (typeof page !== "object" || page === null || !Array.isArray((page as { items?: unknown }).items)) {
      yield { line: value.line, error: "not a list page: expected an object with an items array, as GET /api/submission answers" };
      continue;
    }
    const items = (page as { items: unknown[] }).items;
    for (const [index, item] of items.entries()) {
      const { value: normalised, adjusted } = fromSeedItem(item);
      const checked = checkRecord(normalised, limits);
      yield { line: value.line, where: `items[${index}]`, ...checked, ...("submission" in checked && adjusted ? { adjusted } : {}) };
    }
  }
}

/** A seed service's item in formsink's canonical form, where that changes nothing it means. */
function fromSeedItem(item: unknown): { value: unknown; adjusted?: string } {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return { value: item };
  const value = { ...(item as Record<string, unknown>) };
  let adjusted: string | undefined;
  if (typeof value.submissionId === "string") value.submissionId = value.submissionId.toLowerCase();
  if (typeof value.createdAt === "string") {
    const instant = parseInstant(value.createdAt);
    if (instant && !instant.insideMillis) value.createdAt = new Date(instant.millis).toISOString();
  }
  if (typeof value.device === "string" && !isDevice(value.device)) {
    const lower = value.device.toLowerCase();
    const device = isDevice(lower) ? lower : deviceFromUserAgent(typeof value.userAgent === "string" ? value.userAgent : "");
    adjusted = `device ${JSON.stringify(value.device)} taken as ${device}`;
    value.device = device;
  }
  return { value, adjusted };
}

function isDevice(text: string): text is Device {
  return (DEVICES as readonly string[]).includes(text);
}

/** The checks a create goes through, for a whole submission. */
function checkRecord(value: unknown, limits: Limits): { submission: Submission } | { error: string } {
  try {
    checkJsonValue(value, limits.maxDataDepth + RECORD_NESTING_SLACK, "the record");
    const checked = validate(submissionSchema, value, "submission") as Submission;
    checkSubmissionData(checked.data as { [key: string]: JsonValue }, limits);
    return { submission: checked };
  } catch (error) {
    if (error instanceof HttpError) return { error: error.message };
    throw error;
  }
}
