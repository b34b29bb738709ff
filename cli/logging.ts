/**
 * The server's log: one JSON object per line with pino's fields (and pino-http's shape for
 * request lines), so that it goes wherever people already send pino logs (pino-pretty, Loki,
 * Datadog, `jq`), or short lines for a person at a terminal. Only what the handler's log entries
 * hold is written: the path without its query string, never a header or a body.
 */
import { hostname } from "node:os";
import type { LogEntry, RequestLogEntry } from "../src/options.ts";
import { StoreUnavailable, type StoreFaultKind } from "../src/store.ts";
import { BadValue } from "./config.ts";

export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** pino's numeric levels. */
const INFO = 30;
const WARN = 40;
const ERROR = 50;

export interface ServerLog {
  info(message: string): void;
  warn(message: string): void;
  /** A failure outside the handler's answers (level 50, with the error's stack). */
  error(message: string, error: unknown): void;
  /**
   * What `createSubmissionsHandler`'s `log` option receives. A storage fault's detail is written
   * once, when it starts, and its end once (`storageFaults`); every request has its request line.
   */
  entry(entry: LogEntry): void;
}

/** `--log-format`'s value (or FORMSINK_LOG_FORMAT's). */
export function parseLogFormat(text: string): LogFormat {
  if (!(LOG_FORMATS as readonly string[]).includes(text)) throw new BadValue(`must be ${LOG_FORMATS.join(" or ")}`);
  return text as LogFormat;
}

export function createServerLog(format: LogFormat, writeLine: (line: string) => void): ServerLog {
  return format === "json" ? jsonLog(writeLine) : prettyLog(writeLine);
}

function jsonLog(writeLine: (line: string) => void): ServerLog {
  const faults = storageFaults();
  // pino's base fields: serialised once, as pino does.
  const base = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  const line = (level: number, fields: object) => {
    const rest = JSON.stringify(fields);
    writeLine(`{"level":${level},"time":${Date.now()},${base}${rest === "{}" ? "" : `,${rest.slice(1, -1)}`}}`);
  };
  return {
    info: (msg) => line(INFO, { msg }),
    warn: (msg) => line(WARN, { msg }),
    error: (msg, error) => line(ERROR, { err: serializeError(error), msg }),
    entry(entry) {
      if (entry.type === "warning") {
        line(WARN, { req: { method: entry.method, url: entry.path }, msg: entry.error.message });
        return;
      }
      const req = { id: entry.requestId, method: entry.method, url: entry.path };
      if (entry.type === "request") {
        line(entry.status >= 500 ? ERROR : INFO, {
          req,
          res: { statusCode: entry.status },
          route: entry.route,
          responseTime: Math.round(entry.durationMs * 1000) / 1000,
          msg: entry.status >= 500 ? "request errored" : "request completed",
        });
        for (const ended of faults.endedBy(entry)) line(INFO, { msg: faultEnded(ended) });
      } else if (faults.begins(entry.error)) {
        const err = serializeError(entry.error);
        line(ERROR, { req, err, msg: entry.error instanceof StoreUnavailable ? faultBegun(err.message) : err.message });
      }
    },
  };
}

function prettyLog(writeLine: (line: string) => void): ServerLog {
  const faults = storageFaults();
  const stamp = () => new Date().toISOString();
  return {
    info: (message) => writeLine(message),
    warn: (message) => writeLine(message),
    error(message, error) {
      const { stack, message: text } = serializeError(error);
      writeLine(`${stamp()} ERROR ${message}: ${stack ?? text}`);
    },
    entry(entry) {
      if (entry.type === "warning") {
        writeLine(`${stamp()} WARN ${entry.error.message}`);
      } else if (entry.type === "request") {
        writeLine(`${stamp()} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs.toFixed(1)}ms ${entry.requestId}`);
        for (const ended of faults.endedBy(entry)) writeLine(`${stamp()} ${faultEnded(ended)}`);
      } else if (faults.begins(entry.error)) {
        const { stack, message } = serializeError(entry.error);
        const about = entry.error instanceof StoreUnavailable ? `${faultBegun(message)}\n` : "";
        writeLine(`${stamp()} ERROR ${entry.method} ${entry.path} ${entry.requestId}: ${about}${stack ?? message}`);
      }
    },
  };
}

interface StorageFault {
  kind: StoreFaultKind;
  message: string;
  /** The requests it failed: its first and every one after. */
  failed: number;
}

/**
 * A storage fault (a full disk, a disk that refuses writes, a lock another process holds, a
 * corrupt page: the store's `StoreUnavailable`) fails every request that meets it until it
 * clears, under load as often as requests come. Its detail (message, stack, cause) is written
 * once, as it begins; each request it fails then has its request line only, whose status (503,
 * 507) shows it; and the first write that succeeds after it ends it, in one line with how many
 * requests it failed. A corrupt file is not mended by a write elsewhere in it: that fault is
 * written once for the server's life.
 */
function storageFaults() {
  const ongoing = new Map<string, StorageFault>();
  return {
    /** False for a storage fault already going on (counted, not to be written again); true for anything else. */
    begins(error: unknown): boolean {
      if (!(error instanceof StoreUnavailable)) return true;
      const key = `${error.kind}\n${error.message}`;
      const fault = ongoing.get(key);
      if (fault) fault.failed++;
      else ongoing.set(key, { kind: error.kind, message: error.message, failed: 1 });
      return fault === undefined;
    },
    /** The faults a request's success ends (a write that succeeded ends every fault but a corrupt file), each once. */
    endedBy(entry: RequestLogEntry): StorageFault[] {
      if (ongoing.size === 0 || !isWrite(entry.method) || entry.status >= 300) return [];
      const ended = [...ongoing].filter(([, fault]) => fault.kind !== "corrupt");
      for (const [key] of ended) ongoing.delete(key);
      return ended.map(([, fault]) => fault);
    },
  };
}

function isWrite(method: string): boolean {
  return method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
}

function faultBegun(message: string): string {
  return `storage fault: ${message} (the requests it fails are logged as their request lines only, until a write succeeds)`;
}

function faultEnded(fault: StorageFault): string {
  return `storage fault over, a write succeeded: ${fault.message} (${fault.failed} ${fault.failed === 1 ? "request" : "requests"} failed by it)`;
}

/**
 * pino's `err` serializer: the error's class name, message and stack, the stack followed by its
 * causes' (a storage fault's cause is the database's own error) as pino writes them.
 */
function serializeError(error: unknown): { type: string; message: string; stack?: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) };
  let stack = error.stack;
  for (let cause = error.cause, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    stack = `${stack ?? ""}\ncaused by: ${cause.stack ?? cause.message}`;
  }
  return { type: error.constructor.name, message: error.message, stack };
}
