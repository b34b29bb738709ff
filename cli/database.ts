import { accessSync, constants, existsSync, type Stats, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type CompleteStore, StoreUnavailable } from "../src/store.ts";
import { libsqlDriver } from "../src/stores/libsql/client.ts";
import { openLibsqlFile, primaryResultCode } from "../src/stores/libsql/file.ts";
import { DEFAULT_DATABASE_URL, localPath } from "../src/stores/libsql/options.ts";
import type { ThreadWriteLock } from "../src/stores/libsql/thread-write-lock.ts";
import type { SqlDriver } from "../src/stores/sql/driver.ts";
import type { SchemaUpgrade } from "../src/stores/sql/migrate.ts";
import { openSqlStore } from "../src/stores/sql/store.ts";
import { BadValue, setting, settingHelp } from "./config.ts";
import { type Io, messageOf, UsageError } from "./usage.ts";

const SUPPORTED_URL = /^(file:.+|:memory:|libsql:\/\/.+|https?:\/\/.+|wss?:\/\/.+|postgres(ql)?:\/\/.+)$/;

/** True for a PostgreSQL URL (`postgres://` or `postgresql://`). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

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
  help: "libSQL database: file:<path>, :memory:, or libsql://<name>.turso.io\nwith FORMSINK_DB_AUTH_TOKEN; or PostgreSQL: postgres://user:pass@host/db",
  parse: (url) => {
    if (!SUPPORTED_URL.test(url)) {
      throw new BadValue(`must be a libSQL URL such as ${DEFAULT_DATABASE_URL}, :memory: or libsql://<name>.turso.io, or postgres://...`);
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
  /** The storage is at fault (exit code 3), not the schema or the command. */
  readonly storage: boolean;

  constructor(message: string, options: { storage?: boolean } = {}) {
    super(message);
    this.storage = options.storage ?? false;
  }
}

/** SQLite's codes for storage that cannot be used, with what to tell the operator. */
const STORAGE_CODES: Record<string, string> = {
  SQLITE_CORRUPT: "the database file is corrupt; restore it from a backup (formsink restore)",
  SQLITE_NOTADB: "the file is not a SQLite database",
  SQLITE_CANTOPEN: "the database file cannot be opened",
  SQLITE_FULL: "the disk is full",
  SQLITE_READONLY: "the database cannot be written (read-only file or directory)",
  SQLITE_IOERR: "the disk failed to read or write",
};

/**
 * What to tell the operator when `error` is storage at fault (a corrupt file, a full disk, a
 * lock held too long), else undefined: a command reports it in one line, exit code 3.
 */
export function storageProblem(error: unknown): string | undefined {
  // The operator gets the command-line advice for SQLite's code (restore a corrupt file from a backup).
  const sqlite = databaseError(error);
  const code = primaryResultCode(sqlite);
  if (code !== undefined && code in STORAGE_CODES) return `${STORAGE_CODES[code]} (${(sqlite as Error).message})`;
  if (error instanceof StoreUnavailable) return withCause(error);
  if (refusedByPostgres(error)) return (error as Error).message;
  return undefined;
}

/**
 * The database's own error: the file store wraps SQLite's in a `StoreUnavailable`, whose words
 * are for an API client's answer; any other error as it is.
 */
export function databaseError(error: unknown): unknown {
  return error instanceof StoreUnavailable && error.cause instanceof Error ? error.cause : error;
}

/**
 * The fault with what caused it, for the person at the command: a pooler answers a wrong
 * password with a connection error of its own (PgBouncer: SQLSTATE 08P01), which the store
 * reports as a database that is unreachable, and only the cause's text says why.
 */
function withCause(fault: StoreUnavailable): string {
  const cause = fault.cause instanceof Error ? fault.cause.message : "";
  return cause === "" || fault.message.includes(cause) ? fault.message : `${fault.message} (${cause})`;
}

/**
 * PostgreSQL refused the connection itself (SQLSTATE class 28: a wrong password, an unknown
 * role; 3D000: no such database): the URL's database cannot be used, as a missing file's cannot.
 */
function refusedByPostgres(error: unknown): boolean {
  const { code } = (error ?? {}) as { code?: unknown };
  return error instanceof Error && typeof code === "string" && (code.startsWith("28") || code === "3D000");
}

/**
 * Why a database file at `path` cannot be used, before SQLite tries: its directory must exist
 * and be writable, since SQLite makes the -wal and -shm files next to it, and so must the file.
 */
function unwritable(path: string): string | undefined {
  const file = resolve(path);
  const dir = dirname(file);
  if (!existsSync(dir)) return `the directory ${dir} does not exist`;
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return `the directory ${dir} is not writable (SQLite creates the database's -wal and -shm files there)`;
  }
  try {
    if (existsSync(file)) accessSync(file, constants.W_OK);
  } catch {
    return `the file ${file} is read-only`;
  }
  return undefined;
}

/**
 * How a process with two threads on one database connects from each (serve and its webhook
 * thread): a libSQL file's connections take `writeLock` around their writes; a thread that does
 * nothing else has one synchronous connection to a file and a pool of `poolSize` to PostgreSQL.
 */
export interface DatabaseConnection {
  writeLock?: ThreadWriteLock;
  synchronous?: boolean;
  syncEachCommit?: boolean;
  poolSize?: number;
}

/**
 * Opens the database and brings its schema up to date, saying so on stderr when this process
 * did it (of several processes starting at once, only the one that migrated says it).
 */
export async function openDatabase(url: string, io: Pick<Io, "env" | "stderr"> & { connection?: DatabaseConnection }): Promise<CompleteStore> {
  const path = localPath(url);
  const problem = path === undefined || path === ":memory:" ? undefined : unwritable(path);
  if (problem !== undefined) throw new DatabaseError(`cannot open database ${displayUrl(url)}: ${problem}`, { storage: true });
  try {
    if (isPostgresUrl(url)) return await openPostgres(url, io);
    const { driver, close, checkFile } = await connect(url, io.env.FORMSINK_DB_AUTH_TOKEN, io.connection);
    try {
      const { store, upgrade } = await openSqlStore(driver, close);
      reportUpgrade(upgrade, io);
      if (checkFile) {
        // A server on a file replaced under it answers reads from the old one and refuses every
        // write: its health check fails too, so that a load balancer or container engine sees it.
        const ping = store.ping!.bind(store);
        store.ping = () => (checkFile(), ping());
      }
      return store;
    } catch (error) {
      await close();
      throw error;
    }
  } catch (error) {
    const storage = storageProblem(error);
    throw new DatabaseError(`cannot open database ${displayUrl(url)}: ${storage ?? messageOf(error)}`, { storage: storage !== undefined });
  }
}

function reportUpgrade({ from, to }: SchemaUpgrade, io: Pick<Io, "stderr">): void {
  if (from !== to) io.stderr(from === 0 ? `database schema created at version ${to}` : `database schema upgraded from version ${from} to ${to}`);
}

async function openPostgres(url: string, io: Pick<Io, "stderr"> & { connection?: DatabaseConnection }): Promise<CompleteStore> {
  // Loaded only for PostgreSQL, as the libSQL client is only for remote libSQL.
  const { openPostgresStore } = await import("../src/stores/postgres/index.ts");
  const { store, upgrade } = await openPostgresStore({ url, max: io.connection?.poolSize });
  reportUpgrade(upgrade, io);
  return store;
}

/** A connection; for a file, `checkFile` throws once the file is no longer the one opened. */
async function connect(
  url: string,
  authToken: string | undefined,
  connection: DatabaseConnection = {},
): Promise<{ driver: SqlDriver; close: () => void | Promise<void>; checkFile?: () => void }> {
  const path = localPath(url);
  if (path === ":memory:") return openLibsqlFile(path);
  if (path !== undefined) {
    let opened: Stats | undefined;
    const checkFile = () => refuseIfReplaced(path, opened);
    const opening = openLibsqlFile(path, { ...connection, beforeWrite: checkFile });
    opened = statSync(path);
    return { ...opening, checkFile };
  }
  // Loaded only for remote databases: it is most of the start-up time of a server on a file.
  const { createClient } = await import("@libsql/client");
  const client = createClient({ url, authToken });
  return { driver: libsqlDriver(client), close: () => client.close() };
}

/**
 * Throws when the file at `path` is no longer the one opened (`opened`): deleted, or replaced
 * by another (a restore copied over it). SQLite would go on writing into the open, unlinked
 * file, and every write would be gone at the next start.
 */
function refuseIfReplaced(path: string, opened: Stats | undefined): void {
  if (opened === undefined) return;
  let now: Stats | undefined;
  try {
    now = statSync(path);
  } catch {
    now = undefined;
  }
  if (now?.ino !== opened.ino || now.dev !== opened.dev) {
    throw new StoreUnavailable("replaced", "The database file was deleted or replaced while the server was running; writes are refused until it is restarted");
  }
}

/** A PostgreSQL URL's scheme and user (group 1), then its password. */
const POSTGRES_USER_AND_PASSWORD = /^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/;

/**
 * The URL without its query, which may carry an `authToken`, and without a password; a local
 * file as its absolute path.
 */
export function displayUrl(url: string): string {
  const withoutQuery = url.split("?", 1)[0]!;
  if (isPostgresUrl(url)) return withoutQuery.replace(POSTGRES_USER_AND_PASSWORD, "$1@");
  const path = url === withoutQuery ? localPath(url) : undefined;
  return path === undefined || path === ":memory:" ? withoutQuery : `file:${resolve(path)}`;
}

/** Whether `displayUrl` leaves part of the URL out (a password, a query), so that it no longer opens the database. */
export function displayUrlLeavesOut(url: string): boolean {
  return url.includes("?") || (isPostgresUrl(url) && POSTGRES_USER_AND_PASSWORD.test(url));
}
