/** Helpers for the export/import tests: text as chunks, and records collected. */
import { DEFAULT_LIMITS } from "../../src/options.ts";
import { type ImportFormat, type ImportRecord, readSubmissions } from "../../src/import/records.ts";
import type { Submission } from "../../src/submission.ts";

export { awkwardSubmissions } from "../../src/testing/fixtures.ts";

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
