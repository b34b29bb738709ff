/**
 * `formsink/libsql` where there is no file system and no native code (Workers, browsers): the
 * same API as ./index.ts, for remote libSQL databases (Turso) only, over `@libsql/client/web`.
 */
import { createClient } from "@libsql/client/web";
import type { CompleteStore, WebhookStore } from "../../store.ts";
import { createLibsqlClientStore } from "./client.ts";
import { DEFAULT_DATABASE_URL, type LibsqlStoreOptions, localPath } from "./options.ts";

export { libsqlDriver } from "./client.ts";
export { DEFAULT_DATABASE_URL, isInMemory, type LibsqlStoreOptions } from "./options.ts";

/** Opens (and migrates) a remote libSQL database as a submission store. */
export async function createLibsqlStore(options: LibsqlStoreOptions = {}): Promise<CompleteStore> {
  if (options.client !== undefined) return createLibsqlClientStore(options.client, false, options);
  const url = options.url ?? DEFAULT_DATABASE_URL;
  if (localPath(url) !== undefined) {
    throw new TypeError(`${url} is a local database, which needs Node, Bun or Deno; here, use a remote libSQL URL (Turso) or D1`);
  }
  return createLibsqlClientStore(createClient({ url, authToken: options.authToken }), true, options);
}
