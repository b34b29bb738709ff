/**
 * The default store: libSQL. An embedded file (`file:formsink.db`) or `:memory:` runs on the
 * `libsql` binding directly (./file.ts); a remote libSQL server such as Turso (`libsql://...`
 * with an auth token) goes through `@libsql/client` (./client.ts). Every query is the same SQL
 * store's (../sql).
 */
import type { Client } from "@libsql/client";
import type { SubmissionStore } from "../../store.ts";
import { createSqlStore } from "../sql/store.ts";
import { createLibsqlClientStore } from "./client.ts";
import { openLibsqlFile } from "./file.ts";

export { libsqlDriver } from "./client.ts";

export interface LibsqlStoreOptions {
  /** `file:path.db` (default `file:formsink.db`), `:memory:`, `libsql://...`, `https://...`. */
  url?: string;
  /** For remote databases (Turso). */
  authToken?: string;
  /** Use this client instead of opening one; the store then leaves closing it to you. */
  client?: Client;
}

export const DEFAULT_DATABASE_URL = "file:formsink.db";

/** Opens (and migrates) a libSQL database as a submission store. */
export async function createLibsqlStore(options: LibsqlStoreOptions = {}): Promise<SubmissionStore> {
  if (options.client !== undefined) return createLibsqlClientStore(options.client, false);
  const url = options.url ?? DEFAULT_DATABASE_URL;
  const path = localPath(url);
  if (path === undefined) {
    // Loaded only for remote databases: it is most of the start-up time of a server on a file.
    const { createClient } = await import("@libsql/client");
    return createLibsqlClientStore(createClient({ url, authToken: options.authToken }), true);
  }
  const connection = openLibsqlFile(path);
  try {
    return await createSqlStore(connection.driver, connection.close);
  } catch (error) {
    connection.close();
    throw error;
  }
}

/** True for a libSQL URL of a database that lives only in this process. */
export function isInMemory(url: string | undefined): boolean {
  return url !== undefined && /^(file:)?:memory:/.test(url);
}

/**
 * The file path of a local database URL (`file:relative.db`, `file:///absolute.db`,
 * `:memory:`), or undefined for a remote one. Query parameters are not supported locally.
 */
function localPath(url: string): string | undefined {
  if (isInMemory(url)) return ":memory:";
  if (!url.startsWith("file:")) return undefined;
  if (url.includes("?")) throw new TypeError(`a local database URL takes no query parameters (got "${url}")`);
  const rest = url.slice("file:".length);
  return rest.startsWith("//") ? decodeURIComponent(new URL(url).pathname) : decodeURIComponent(rest);
}
