/** Helpers for the export/import tests: text as chunks, and records collected. */
import { DEFAULT_LIMITS } from "../../src/options.ts";
import { type ImportFormat, type ImportRecord, readSubmissions } from "../../src/import/records.ts";
import type { Submission } from "../../src/submission.ts";

/** The text in chunks of `size` characters, so that every boundary case gets hit. */
export async function* chunked(text: string, size = text.length || 1): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export function records(format: ImportFormat, text: string, chunkSize?: number): Promise<ImportRecord[]> {
  return collect(readSubmissions(format, chunked(text, chunkSize), DEFAULT_LIMITS));
}

export function submissionsOf(records: ImportRecord[]): Submission[] {
  return records.map((record) => {
    if ("error" in record) throw new Error(`line ${record.line}: ${record.error}`);
    return record.submission;
  });
}

/** Submissions whose every field and data value is something a CSV or a spreadsheet gets wrong. */
export function awkwardSubmissions(): Submission[] {
  const base = {
    popupId: "popup", domain: "example.com", userAgent: "Mozilla/5.0", device: "desktop" as const, status: "pending" as const,
  };
  const values = [
    "=1+2", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "'quoted", "''", "'=x", "-5", "5", "1e3", "true", "null", "false", "",
    " padded ", "[1]", "{}", '"quoted"', 'a "b" c', "a,b", "line\nbreak", "crlf\r\nbreak", "Jöhn 😀 中文", "\u2028", "-", "=",
    // the SQL store's page separators (list-query.ts), which a value may hold all the same
    "\x1e", "a\x1fb\x1ec",
  ];
  const submissions: Submission[] = values.map((text, i) => ({
    ...base,
    submissionId: `0193f5c2-7b8e-7cc1-9a1e-${String(i).padStart(12, "0")}`,
    popupId: text === "" ? "p" : text,
    domain: i % 2 ? text : "",
    userAgent: text,
    data: { text, [`key ${text}`.slice(0, 128)]: i },
    createdAt: new Date(Date.UTC(2025, 6, 12) + i).toISOString(),
  }));
  submissions.push({
    ...base,
    submissionId: "0193f5c2-7b8e-7cc1-9a1e-ffffffffffff",
    data: {
      n: -5, zero: 0, big: 9007199254740991, tiny: 5e-324, exp: 1e21, frac: -0.125, yes: true, no: false, nothing: null,
      list: [1, "two", null, { three: [3] }], object: { nested: { deep: "=x" } }, "data.inner": "dotted", "with,comma": "x", 'with"quote': "y",
    },
    createdAt: "2025-07-12T23:59:59.999Z",
  });
  submissions.push({ ...base, submissionId: "0193f5c2-7b8e-7cc1-9a1e-fffffffffffe", data: {}, status: "completed", device: "unknown", createdAt: "1970-01-01T00:00:00.000Z" });
  return submissions;
}
