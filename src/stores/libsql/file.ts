/**
 * Embedded libSQL (a file or `:memory:`) through the `libsql` binding directly, which
 * `@libsql/client` itself runs on: one connection, each statement prepared once and kept,
 * and a batch is BEGIN ... COMMIT around synchronous calls. Through `@libsql/client` every
 * call prepares its statement again and builds each row with `Object.defineProperty`, which
 * cost more than the queries themselves (bench/README.md).
 */
import Database from "libsql";
import { StoreUnavailable } from "../../store.ts";
import type { SqlDriver, SqlResult, SqlRow, SqlStatement, SqlValue } from "../sql/driver.ts";

/** Prepared statements kept per connection; past this many, the cache starts over. */
const MAX_PREPARED = 512;

/** What the driver uses of a prepared `libsql` statement. */
interface PreparedStatement {
  readonly reader: boolean;
  run(...args: unknown[]): { changes: number };
  all(...args: unknown[]): unknown[];
  raw(toggle?: boolean): PreparedStatement;
}

export interface FileConnection {
  driver: SqlDriver;
  close(): void;
}

/**
 * How long a request waits for another process's write lock (a `formsink keys` command, a
 * `VACUUM`, an operator's `sqlite3` session) before it is answered 503.
 */
const LOCK_WAIT_MS = 5000;
/** The longest pause between two tries for the lock: bounds how late a freed lock is noticed. */
const MAX_RETRY_PAUSE_MS = 25;

/** Statements SQLite refuses inside a transaction. */
const OUTSIDE_TRANSACTION = /^\s*VACUUM\b/i;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Opens `path` (or `:memory:`). Another process's write lock is waited for without blocking
 * the event loop: SQLite's own busy handler would sleep in the only thread, stopping every
 * request, so it is off and a busy statement is tried again on a timer until `LOCK_WAIT_MS`.
 */
export interface FileOptions {
  /**
   * Runs before each write and throws to refuse it: the CLI's server checks there that the
   * file at `path` is still the one it opened (a deleted or replaced file would take writes
   * that are lost at the next start). The core cannot look at files itself.
   */
  beforeWrite?: () => void;
}

export function openLibsqlFile(path: string, options: FileOptions = {}): FileConnection {
  // Opening may wait for the lock (switching to WAL): nothing is served yet, so waiting in the
  // binding is fine; from then on SQLite answers SQLITE_BUSY at once.
  const db = new Database(path, { timeout: LOCK_WAIT_MS });
  if (path !== ":memory:") {
    // WAL: readers never wait for the writer. FULL: each commit is on disk (the WAL fsynced)
    // before it returns, so an acknowledged write survives a power loss (README: durability).
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
  }
  // Deleted rows are overwritten with zeros, not left in free space: an erased person's data
  // must not stay readable in the file (docs/privacy.md, "What remains on disk").
  db.exec("PRAGMA secure_delete = ON");
  db.exec("PRAGMA busy_timeout = 0");
  // Whether a statement returns rows is asked of the binding once, not on every run. Raw mode
  // (rows as arrays) is a state of the prepared statement, so each mode has its own.
  const prepared = new Map<string, { statement: PreparedStatement; reader: boolean }>();
  const prepare = (sql: string, asArrays = false) => {
    const key = asArrays ? `raw:${sql}` : sql;
    let entry = prepared.get(key);
    if (entry === undefined) {
      if (prepared.size >= MAX_PREPARED) prepared.clear();
      const statement = db.prepare(sql);
      entry = { statement: asArrays ? statement.raw(true) : statement, reader: statement.reader };
      prepared.set(key, entry);
    }
    return entry;
  };
  const run = ({ sql, args = [], asArrays }: SqlStatement): SqlResult => {
    const { statement, reader } = prepare(sql, asArrays);
    if (reader) return { rows: statement.all(args as SqlValue[]) as SqlRow[], rowsAffected: 0 };
    return { rows: [], rowsAffected: statement.run(args as SqlValue[]).changes };
  };
  // BEGIN, COMMIT and ROLLBACK go through `exec`, never a kept statement: a kept statement that
  // failed with SQLITE_BUSY stays "in progress" until it is run again, and every later COMMIT
  // then fails ("SQL statements in progress"), which broke the store for good.
  const transaction = (statements: readonly SqlStatement[], mode: "read" | "write"): SqlResult[] => {
    if (mode === "write") options.beforeWrite?.();
    db.exec(mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    try {
      const results = statements.map(run);
      db.exec("COMMIT");
      return results;
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  };
  // A write alone still takes the lock through BEGIN IMMEDIATE, so that only `exec` ever meets
  // another process's lock; a read in WAL mode does not wait for writers, and VACUUM cannot run
  // inside a transaction.
  const execute = (statement: SqlStatement): SqlResult =>
    prepare(statement.sql, statement.asArrays).reader || OUTSIDE_TRANSACTION.test(statement.sql) ? run(statement) : transaction([statement], "write")[0]!;
  return {
    driver: {
      execute: (statement) => patiently(() => execute(statement)),
      batch: (statements, mode) => patiently(() => transaction(statements, mode)),
    },
    close: () => {
      prepared.clear();
      // Moves every commit from the WAL into the file and empties the WAL: after a clean stop
      // the .db alone holds all the data, so copying just it (as people do) loses nothing.
      // (libSQL does not do it when the last connection closes, as SQLite does.)
      try {
        if (path !== ":memory:") db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } finally {
        db.close();
      }
    },
  };
}

/**
 * Runs `work` (synchronous, all or nothing) until it is not refused for another process's lock,
 * pausing on a timer in between; storage faults become `StoreUnavailable`.
 */
async function patiently<T>(work: () => T): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS)) {
    try {
      return work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== "SQLITE_BUSY" && code !== "SQLITE_LOCKED") throw storageFault(error);
      if (Date.now() + pause > deadline) {
        throw new StoreUnavailable("busy", "The database is locked by another process; try again shortly", { cause: error });
      }
      await sleep(pause);
    }
  }
}

/** A storage fault as `StoreUnavailable`, anything else (a constraint, a bug) as it is. */
function storageFault(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === "SQLITE_FULL") return new StoreUnavailable("full", "The database has no space left for this write", { cause: error });
  if (code === "SQLITE_READONLY") return new StoreUnavailable("read-only", "The database cannot be written (read-only file or directory)", { cause: error });
  return error;
}
