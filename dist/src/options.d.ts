import type { Authenticate } from "./auth/principal.js";
import type { DataLimits } from "./data-limits.js";
export interface Limits extends DataLimits {
    /** Largest request body accepted, in bytes; larger ones get 413 while they stream in. */
    maxBodyBytes: number;
}
export declare const DEFAULT_LIMITS: Limits;
/** One line of the request log: never the key, the query string or the body. */
export interface RequestLogEntry {
    type: "request";
    method: string;
    path: string;
    status: number;
    durationMs: number;
}
/** An unexpected failure behind a 500: the details go here, never into the response. */
export interface ErrorLogEntry {
    type: "error";
    method: string;
    path: string;
    error: unknown;
}
export type LogEntry = RequestLogEntry | ErrorLogEntry;
export interface SubmissionsHandlerOptions {
    /** Where the API is mounted in the host app, e.g. `/forms`. Default: `""`. */
    basePath?: string;
    /** Replaces the store's own key lookup, for host apps that have a key system of their own. */
    authenticate?: Authenticate;
    limits?: Partial<Limits>;
    /** Receives one entry per request and one per unexpected error. Default: nothing is logged. */
    log?: (entry: LogEntry) => void;
}
