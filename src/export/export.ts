/**
 * An export: every submission that matches, as CSV or NDJSON, read from the store page by page
 * (a keyset walk) and handed out as a byte stream. At most a page or two is in memory however
 * many rows there are, and a reader that stops (a client that hung up) stops the walk.
 */
import { HttpError } from "../http/errors.ts";
import type { ExportFormat } from "../schemas.ts";
import type { SubmissionCursor, SubmissionFilter, SubmissionStore } from "../store.ts";
import type { Submission } from "../submission.ts";
import { csvHeader, csvRecord } from "./csv.ts";

/** More distinct data keys than this make a CSV no spreadsheet can use; NDJSON has no limit. */
export const MAX_CSV_DATA_COLUMNS = 1000;

export const DEFAULT_EXPORT_PAGE_SIZE = 1000;

export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8; header=present",
  ndjson: "application/x-ndjson; charset=utf-8",
};

export interface ExportOptions {
  format: ExportFormat;
  filter: SubmissionFilter;
  order: "asc" | "desc";
  pageSize?: number;
  /** Told after each page is handed out, with the number of rows so far. */
  onProgress?: (rows: number) => void;
}

/**
 * Opens an export. The CSV columns (one per distinct data key, found by the store in one pass
 * over the keys before any row is read) and the first page are read before this resolves, so
 * a failure there is an error, not a broken stream.
 */
export async function openExport(store: SubmissionStore, accountId: string, options: ExportOptions): Promise<ReadableStream<Uint8Array>> {
  const { format, filter, order, onProgress } = options;
  const pageSize = options.pageSize ?? DEFAULT_EXPORT_PAGE_SIZE;
  let dataKeys: string[] = [];
  if (format === "csv") {
    dataKeys = await store.listDataKeys(accountId, filter, MAX_CSV_DATA_COLUMNS + 1);
    if (dataKeys.length > MAX_CSV_DATA_COLUMNS) {
      throw new HttpError(
        400,
        `These submissions have more than ${MAX_CSV_DATA_COLUMNS} distinct data keys, too many CSV columns; export them with format=ndjson, or narrow the export (popupId, createdAfter)`,
      );
    }
  }
  const formatRecord = format === "csv" ? (s: Submission) => csvRecord(s, dataKeys) : (s: Submission) => `${JSON.stringify(s)}\n`;
  const readPage = (after: SubmissionCursor | undefined) => store.walkSubmissions(accountId, { ...filter, order, limit: pageSize, after });

  const encoder = new TextEncoder();
  let page = await readPage(undefined);
  let rows = 0;
  let head = format === "csv" ? csvHeader(dataKeys) : "";
  return new ReadableStream<Uint8Array>({
    // Called again when the reader has taken the last chunk (one chunk is kept ready), so the
    // next page is read while the one before is being written out; a reader that cancels
    // gets no further page read.
    async pull(controller) {
      const current = page;
      let text = head;
      head = "";
      for (const submission of current) text += formatRecord(submission);
      rows += current.length;
      if (text !== "") controller.enqueue(encoder.encode(text));
      onProgress?.(rows);
      const last = current.at(-1);
      // A short page is the last one; the next starts after the last row handed out.
      if (current.length < pageSize || last === undefined) {
        controller.close();
        return;
      }
      page = await readPage({ createdAt: Date.parse(last.createdAt), submissionId: last.submissionId });
    },
  });
}

/** `submissions-20250712T103000Z.csv`: sorts by time, and safe in every file system. */
export function exportFileName(format: ExportFormat, now: Date): string {
  return `submissions-${now.toISOString().replace(/[-:]|\.\d+/g, "")}.${format}`;
}
