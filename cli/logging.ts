/**
 * The server's log: one JSON object per line with pino's fields (and pino-http's shape for
 * request lines), so that it goes wherever people already send pino logs (pino-pretty, Loki,
 * Datadog, `jq`), or short lines for a person at a terminal. Only what the handler's log entries
 * hold is written: the path without its query string, never a header or a body.
 */
import { hostname } from "node:os";
import type { LogEntry } from "../src/options.ts";
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
  /** What `createSubmissionsHandler`'s `log` option receives. */
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
      } else {
        const err = serializeError(entry.error);
        line(ERROR, { req, err, msg: err.message });
      }
    },
  };
}

function prettyLog(writeLine: (line: string) => void): ServerLog {
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
      } else {
        const { stack, message } = serializeError(entry.error);
        writeLine(`${stamp()} ERROR ${entry.method} ${entry.path} ${entry.requestId}: ${stack ?? message}`);
      }
    },
  };
}

/** pino's `err` serializer: the error's class name, message and stack. */
function serializeError(error: unknown): { type: string; message: string; stack?: string } {
  if (error instanceof Error) return { type: error.constructor.name, message: error.message, stack: error.stack };
  return { type: typeof error, message: String(error) };
}
