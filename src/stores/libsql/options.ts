/** What both libSQL entry points (./index.ts for servers, ./web.ts for Workers) take and share. */
import type { Client } from "@libsql/client";
import type { SqlStoreOptions } from "../sql/store.ts";

export interface LibsqlStoreOptions extends SqlStoreOptions {
  /** `file:path.db` (default `file:formsink.db`), `:memory:`, `libsql://...`, `https://...`. */
  url?: string;
  /** For remote databases (Turso). */
  authToken?: string;
  /** Use this client instead of opening one; the store then leaves closing it to you. */
  client?: Client;
}

export const DEFAULT_DATABASE_URL = "file:formsink.db";

/** True for a libSQL URL of a database that lives only in this process. */
export function isInMemory(url: string | undefined): boolean {
  return url !== undefined && /^(file:)?:memory:/.test(url);
}

/**
 * The file path of a local database URL (`file:relative.db`, `file:///absolute.db`,
 * `:memory:`), or undefined for a remote one. Query parameters are not supported locally.
 */
export function localPath(url: string): string | undefined {
  if (isInMemory(url)) return ":memory:";
  if (!url.startsWith("file:")) return undefined;
  if (url.includes("?")) throw new TypeError(`a local database URL takes no query parameters (got "${url}")`);
  const rest = url.slice("file:".length);
  return rest.startsWith("//") ? decodeURIComponent(new URL(url).pathname) : decodeURIComponent(rest);
}
