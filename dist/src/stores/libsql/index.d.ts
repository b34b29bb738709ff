/**
 * The default store: libSQL through `@libsql/client`. The same code serves an embedded file
 * (`file:formsink.db`), `:memory:` and a remote libSQL server such as Turso
 * (`libsql://...` with an auth token).
 */
import { type Client } from "@libsql/client";
import type { SubmissionStore } from "../../store.js";
import type { SqlDriver } from "../sql/driver.js";
export interface LibsqlStoreOptions {
    /** `file:path.db` (default `file:formsink.db`), `:memory:`, `libsql://...`, `https://...`. */
    url?: string;
    /** For remote databases (Turso). */
    authToken?: string;
    /** Use this client instead of opening one; the store then leaves closing it to you. */
    client?: Client;
}
export declare const DEFAULT_DATABASE_URL = "file:formsink.db";
/** Opens (and migrates) a libSQL database as a submission store. */
export declare function createLibsqlStore(options?: LibsqlStoreOptions): Promise<SubmissionStore>;
/** True for a libSQL URL of a database that lives only in this process. */
export declare function isInMemory(url: string | undefined): boolean;
/** A `SqlDriver` over a libSQL client, for stores and tests that drive the SQL directly. */
export declare function libsqlDriver(client: Client): SqlDriver;
