import type { CompleteStore } from "../src/store.ts";
import { createLibsqlStore, DEFAULT_DATABASE_URL } from "../src/stores/libsql/index.ts";
import { UsageError } from "./usage.ts";

export const DATABASE_HELP = `  --db <url>    libSQL database: file:<path> (default ${DEFAULT_DATABASE_URL}), :memory:,
                or libsql://<name>.turso.io with FORMSINK_DB_AUTH_TOKEN   [env FORMSINK_DB]`;

const SUPPORTED_URL = /^(file:.+|:memory:|libsql:\/\/.+|https?:\/\/.+|wss?:\/\/.+)$/;

/** The database URL from `--db`, else `FORMSINK_DB`, else the embedded default file. */
export function databaseUrl(flag: string | undefined, env: Record<string, string | undefined>): string {
  const url = flag ?? env.FORMSINK_DB ?? DEFAULT_DATABASE_URL;
  if (!SUPPORTED_URL.test(url)) {
    throw new UsageError(
      `--db must be a libSQL URL such as ${DEFAULT_DATABASE_URL}, :memory: or libsql://<name>.turso.io (got "${url}")`,
    );
  }
  return url;
}

export class DatabaseError extends Error {
  override name = "DatabaseError";
}

export async function openDatabase(url: string, env: Record<string, string | undefined>): Promise<CompleteStore> {
  try {
    return await createLibsqlStore({ url, authToken: env.FORMSINK_DB_AUTH_TOKEN });
  } catch (error) {
    throw new DatabaseError(`cannot open database ${displayUrl(url)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The URL without its query, which may carry an `authToken`. */
export function displayUrl(url: string): string {
  return url.split("?", 1)[0]!;
}
