/**
 * The default store: libSQL. An embedded file (`file:formsink.db`) or `:memory:` runs on the
 * `libsql` binding directly (./file.ts); a remote libSQL server such as Turso (`libsql://...`
 * with an auth token) goes through `@libsql/client` (./client.ts). Every query is the same SQL
 * store's (../sql). Bundlers for Workers and browsers get ./web.ts instead (package.json), which
 * has no native binding and only opens remote databases.
 */
import type { CompleteStore, WebhookStore } from "../../store.ts";
import { createSqlStore } from "../sql/store.ts";
import { createLibsqlClientStore } from "./client.ts";
import { openLibsqlFile } from "./file.ts";
import { DEFAULT_DATABASE_URL, type LibsqlStoreOptions, localPath } from "./options.ts";

export { libsqlDriver } from "./client.ts";
export { DEFAULT_DATABASE_URL, isInMemory, type LibsqlStoreOptions } from "./options.ts";

/** Opens (and migrates) a libSQL database as a submission store. */
export async function createLibsqlStore(options: LibsqlStoreOptions = {}): Promise<CompleteStore> {
  if (options.client !== undefined) return createLibsqlClientStore(options.client, false, options);
  const url = options.url ?? DEFAULT_DATABASE_URL;
  const path = localPath(url);
  if (path === undefined) {
    // Loaded only for remote databases: it is most of the start-up time of a server on a file.
    const { createClient } = await import("@libsql/client");
    return createLibsqlClientStore(createClient({ url, authToken: options.authToken }), true, options);
  }
  const connection = openLibsqlFile(path);
  try {
    return await createSqlStore(connection.driver, connection.close, options);
  } catch (error) {
    await connection.close();
    throw error;
  }
}
