/**
 * The server log's handling of storage faults, in both formats: a fault's detail once as it
 * begins, a request line for every request, its end once when a write succeeds (never for a
 * corrupt file); an unexpected error's detail every time.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServerLog, LOG_FORMATS } from "../../cli/logging.ts";
import type { LogEntry } from "../../src/options.ts";
import { StoreUnavailable } from "../../src/store.ts";

const FULL = "The database has no space left for this write";

function failed(error: unknown, method = "POST"): LogEntry[] {
  return [
    { type: "error", requestId: "r", method, path: "/api/submission", error },
    { type: "request", requestId: "r", method, path: "/api/submission", route: "/api/submission", status: error instanceof StoreUnavailable ? 507 : 500, durationMs: 1 },
  ];
}

function answered(method: string, status: number): LogEntry {
  return { type: "request", requestId: "r", method, path: "/api/submission", route: "/api/submission", status, durationMs: 1 };
}

for (const format of LOG_FORMATS) {
  test(`${format}: a storage fault's detail is written once, each request it fails has its line, and a write that succeeds ends it once`, () => {
    const lines: string[] = [];
    const log = createServerLog(format, (line) => lines.push(line));
    const full = () => new StoreUnavailable("full", FULL, { cause: new Error("SQLITE_FULL: database or disk is full") });
    for (let i = 0; i < 3; i++) failed(full()).forEach(log.entry);
    log.entry(answered("GET", 200)); // a read: the disk may still be full
    failed(full()).forEach(log.entry);
    log.entry(answered("POST", 201));
    log.entry(answered("POST", 201));
    failed(full()).forEach(log.entry); // full again: a new fault

    const detail = lines.filter((line) => line.includes("SQLITE_FULL"));
    assert.is(detail.length, 2, lines.join("\n"));
    assert.match(detail[0]!, `storage fault: ${FULL}`);
    assert.is(lines.filter((line) => line.includes("storage fault over")).length, 1, lines.join("\n"));
    assert.match(lines.find((line) => line.includes("storage fault over"))!, "(4 requests failed by it)");
    // Five failed requests, a read, two writes: a line each.
    assert.is(lines.length, 8 + detail.length + 1, lines.join("\n"));
  });

  test(`${format}: a corrupt file's fault is written once and no write ends it; an unexpected error is written every time`, () => {
    const lines: string[] = [];
    const log = createServerLog(format, (line) => lines.push(line));
    for (let i = 0; i < 3; i++) {
      failed(new StoreUnavailable("corrupt", "The database file is corrupt", { cause: new Error("SQLITE_CORRUPT") }), "GET").forEach(log.entry);
      log.entry(answered("POST", 201));
      failed(new Error("a bug")).forEach(log.entry);
    }
    assert.is(lines.filter((line) => line.includes("SQLITE_CORRUPT")).length, 1, lines.join("\n"));
    assert.is(lines.filter((line) => line.includes("storage fault over")).length, 0, lines.join("\n"));
    assert.is(lines.filter((line) => line.includes("a bug")).length, 3, lines.join("\n"));
  });
}

test.run();
