import type { SubmissionStore } from "../src/store.js";
export declare const DATABASE_HELP = "  --db <url>    libSQL database: file:<path> (default file:formsink.db), :memory:,\n                or libsql://<name>.turso.io with FORMSINK_DB_AUTH_TOKEN   [env FORMSINK_DB]";
/** The database URL from `--db`, else `FORMSINK_DB`, else the embedded default file. */
export declare function databaseUrl(flag: string | undefined, env: Record<string, string | undefined>): string;
export declare class DatabaseError extends Error {
    name: string;
}
export declare function openDatabase(url: string, env: Record<string, string | undefined>): Promise<SubmissionStore>;
/** The URL without its query, which may carry an `authToken`. */
export declare function displayUrl(url: string): string;
