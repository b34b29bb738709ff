import { join, resolve } from "node:path";
import type { CompleteStore } from "../src/store.ts";
import { libsqlDriver } from "../src/stores/libsql/client.ts";
import { openLibsqlFile } from "../src/stores/libsql/file.ts";
import { DEFAULT_DATABASE_URL, localPath } from "../src/stores/libsql/options.ts";
import type { SqlDriver } from "../src/stores/sql/driver.ts";
import { migrate } from "../src/stores/sql/migrate.ts";
import { createSqlStore } from "../src/stores/sql/store.ts";
import { BadValue, setting, settingHelp } from "./config.ts";
import { type Io, UsageError } from "./usage.ts";

const SUPPORTED_URL = /^(file:.+|:memory:|libsql:\/\/.+|https?:\/\/.+|wss?:\/\/.+)$/;

/**
 * The database every command opens. Its default is a file whose place suits how formsink runs:
 * in FORMSINK_DATA_DIR when set (the container image sets it to its volume), else in systemd's
 * StateDirectory= (which systemd passes as STATE_DIRECTORY; the working directory of a service
 * is `/`), else in the working directory (a checkout, `npm start`).
 */
export const DATABASE_SETTING = setting({
  flag: "db",
  env: "FORMSINK_DB",
  valueName: "<url>",
  default: defaultDatabaseUrl,
  defaultText: "formsink.db in $FORMSINK_DATA_DIR, else in $STATE_DIRECTORY, else ./formsink.db",
  help: "libSQL database: file:<path>, :memory:, or libsql://<name>.turso.io\nwith FORMSINK_DB_AUTH_TOKEN",
  parse: (url) => {
    if (!SUPPORTED_URL.test(url)) {
      throw new BadValue(`must be a libSQL URL such as ${DEFAULT_DATABASE_URL}, :memory: or libsql://<name>.turso.io`);
    }
    return url;
  },
});

export const DATABASE_HELP = settingHelp(DATABASE_SETTING);

export function defaultDatabaseUrl(env: Record<string, string | undefined>): string {
  // STATE_DIRECTORY lists one path per StateDirectory= entry, separated by colons.
  const dir = env.FORMSINK_DATA_DIR || env.STATE_DIRECTORY?.split(":")[0];
  return dir ? `file:${join(resolve(dir), "formsink.db")}` : DEFAULT_DATABASE_URL;
}

/** The database URL from `--db`, else `FORMSINK_DB`, else the default location. */
export function databaseUrl(flag: string | undefined, env: Record<string, string | undefined>): string {
  const [url, source] = flag !== undefined ? [flag, "--db"] : env.FORMSINK_DB !== undefined ? [env.FORMSINK_DB, "FORMSINK_DB"] : [undefined, ""];
  if (url === undefined) return defaultDatabaseUrl(env);
  try {
    return DATABASE_SETTING.parse(url);
  } catch (error) {
    throw new UsageError(`${source} ${(error as Error).message} (got "${url}")`);
  }
}

export class DatabaseError extends Error {
  override name = "DatabaseError";
}

/**
 * Opens the database and brings its schema up to date, saying so on stderr when this process
 * did it (of several processes starting at once, only the one that migrated says it).
 */
export async function openDatabase(url: string, io: Pick<Io, "env" | "stderr">): Promise<CompleteStore> {
  try {
    const { driver, close } = await connect(url, io.env.FORMSINK_DB_AUTH_TOKEN);
    try {
      const { from, to } = await migrate(driver);
      if (from !== to) {
        io.stderr(from === 0 ? `database schema created at version ${to}` : `database schema upgraded from version ${from} to ${to}`);
      }
      return await createSqlStore(driver, close);
    } catch (error) {
      close();
      throw error;
    }
  } catch (error) {
    throw new DatabaseError(`cannot open database ${displayUrl(url)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function connect(url: string, authToken: string | undefined): Promise<{ driver: SqlDriver; close: () => void }> {
  const path = localPath(url);
  if (path !== undefined) return openLibsqlFile(path);
  // Loaded only for remote databases: it is most of the start-up time of a server on a file.
  const { createClient } = await import("@libsql/client");
  const client = createClient({ url, authToken });
  return { driver: libsqlDriver(client), close: () => client.close() };
}

/** The URL without its query, which may carry an `authToken`; a local file as its absolute path. */
export function displayUrl(url: string): string {
  const withoutQuery = url.split("?", 1)[0]!;
  const path = url === withoutQuery ? localPath(url) : undefined;
  return path === undefined || path === ":memory:" ? withoutQuery : `file:${resolve(path)}`;
}
