/**
 * An export: every submission that matches, as CSV or NDJSON, read from the store page by page
 * (a keyset walk) and handed out as a byte stream. At most a page or two is in memory however
 * many rows there are, and a reader that stops (a client that hung up) stops the walk.
 */
import { HttpError } from "../http/errors.ts";
import { HAS_SET_IMMEDIATE, nextTurn } from "../next-turn.ts";
import type { ExportFormat } from "../schemas.ts";
import {
  csvPartsPage, listDataKeys, type SubmissionCursor, type SubmissionFilter, type SubmissionStore, type SubmissionWalk, walkSubmissionsAsCsvParts, walkSubmissionsAsNdjson,
} from "../store.ts";
import { csvHeader, csvRecords, PARTS_HOLD_EVERY_FIELD } from "./csv.ts";
import { MAX_CSV_DATA_COLUMNS } from "./limits.ts";

export const DEFAULT_EXPORT_PAGE_SIZE = 1000;

/**
 * Output a page aims at. Small enough that a page's strings stay in V8's young generation
 * (objects up to 128 KiB), whose frequent scavenges also free the byte chunks already written
 * out; pages larger than that are left to a full GC, and the server grows by tens of megabytes
 * during a large export (bench/export.ts measures the growth). Pages also shrink below the
 * page size when rows are large (data up to the body limit each).
 */
const PAGE_TEXT_TARGET = 96 * 1024;
// bench/export.ts (NDJSON): each page costs a statement, a pull of the stream and a socket write
// whatever its size, so pages as large as the page size allows cost less a row.
/**
 * Output an NDJSON page aims at when its bytes are the database's own (`fromDatabase`): no
 * string of the page is made in V8's heap, so the young generation does not bound it. Such
 * chunks are freed by scavenges or by V8's collection for external memory.
 */
const PAGE_BYTES_TARGET = 512 * 1024;
/**
 * The first page is small (rows' sizes are not known yet) and the next ones sized from it,
 * which also keeps a page under D1's 2 MB limit on a value, as the SQL store reads a page as one.
 */
const MIN_PAGE_SIZE = 16;

export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8; header=present",
  ndjson: "application/x-ndjson; charset=utf-8",
};

export interface ExportOptions {
  format: ExportFormat;
  filter: SubmissionFilter;
  order: "asc" | "desc";
  /** Where to start: after this row (a list's cursor); without it, at the first match. */
  after?: SubmissionCursor;
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
    dataKeys = await listDataKeys(store, accountId, filter, MAX_CSV_DATA_COLUMNS + 1);
    if (dataKeys.length > MAX_CSV_DATA_COLUMNS) {
      throw new HttpError(
        400,
        `These submissions have more than ${MAX_CSV_DATA_COLUMNS} distinct data keys, too many CSV columns; export them with format=ndjson, or one popup at a time with popupId`,
      );
    }
  }
  const readPage = format === "csv" ? csvPages(store, accountId, dataKeys) : ndjsonPages(store, accountId);
  const walk = (after: SubmissionCursor | undefined, limit: number) => readPage({ ...filter, order, limit, after });

  // The limit each page was read with, to tell a short (last) page.
  let limit = Math.min(pageSize, MIN_PAGE_SIZE);
  let page = await walk(options.after, limit);
  let rows = 0;
  return new ReadableStream<Uint8Array>({
    // Called again when the reader has taken the last chunk (one chunk is kept ready), so the
    // next page is read while the one before is being written out; a reader that cancels
    // gets no further page read.
    async pull(controller) {
      const current = page;
      rows += current.rows;
      if (current.bytes.byteLength > 0) controller.enqueue(current.bytes);
      onProgress?.(rows);
      // A short page is the last one; the next starts after the last row handed out.
      if (current.rows < limit || current.last === undefined) {
        controller.close();
        return;
      }
      const target = current.fromDatabase ? PAGE_BYTES_TARGET : PAGE_TEXT_TARGET;
      const fitting = Math.floor((current.rows * target) / Math.max(1, current.bytes.byteLength));
      limit = Math.max(MIN_PAGE_SIZE, Math.min(pageSize, fitting));
      await betweenPages();
      page = await walk(current.last, limit);
    },
  });
}

/**
 * Where the stores read synchronously (SQLite files in Node, Bun and Deno), a page's read holds
 * the event loop, and a reader as fast as the pages (a server's own stream handling, or a
 * socket that takes every write at once) would read the next before the loop took any of the
 * server's other requests: each page waits for the loop's next turn. A Worker's stores read
 * asynchronously, which leaves the loop free.
 */
function betweenPages(): Promise<void> | undefined {
  return HAS_SET_IMMEDIATE ? new Promise((resolve) => nextTurn(resolve)) : undefined;
}

interface Page {
  /** The page's records, formatted, UTF-8. */
  bytes: Uint8Array;
  rows: number;
  /** Where the next page starts. */
  last?: SubmissionCursor;
  /** The bytes were never a string in JavaScript (NdjsonPage). */
  fromDatabase?: boolean;
}

/** CSV pages; the first starts with the header. */
function csvPages(store: SubmissionStore, accountId: string, dataKeys: readonly string[]) {
  const encoder = new TextEncoder();
  let head = csvHeader(dataKeys);
  return async (walk: SubmissionWalk): Promise<Page> => {
    // with fields beyond the contract's, which parts do not hold, every row goes through csvRecord
    const { entries, rows, last } = PARTS_HOLD_EVERY_FIELD
      ? await walkSubmissionsAsCsvParts(store, accountId, walk)
      : csvPartsPage(await store.walkSubmissions(accountId, walk));
    const text = head + csvRecords(entries, dataKeys);
    head = "";
    return { bytes: encoder.encode(text), rows, last };
  };
}

function ndjsonPages(store: SubmissionStore, accountId: string) {
  return (walk: SubmissionWalk): Promise<Page> => walkSubmissionsAsNdjson(store, accountId, walk);
}

/** `submissions-20250712T103000Z.csv`: sorts by time, and safe in every file system. */
export function exportFileName(format: ExportFormat, now: Date): string {
  return `submissions-${now.toISOString().replace(/[-:]|\.\d+/g, "")}.${format}`;
}
