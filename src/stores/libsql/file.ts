/**
 * Embedded libSQL (a file or `:memory:`) through the `libsql` binding directly, which
 * `@libsql/client` itself runs on: each statement prepared once and kept. Through
 * `@libsql/client` every call prepares its statement again and builds each row with
 * `Object.defineProperty`, which costs more than a list's queries themselves.
 *
 * A file has two connections. Reads run on one through synchronous calls: a page is a few index
 * lookups, cheaper than any hand-off. Writes run on the other, whose BEGIN and COMMIT are the
 * binding's asynchronous calls (`libsql/promise`), run on the binding's own threads: waiting for
 * another process's lock and the commit's fsync never stop the event loop, so the server goes
 * on reading requests and forming the next group commit meanwhile. The statements between them
 * run synchronously; one write transaction at a time. With `synchronous = FULL` SQLite makes a
 * commit visible to readers only after the WAL is synced, so no read (and no answer) shows a
 * write that is not on disk yet.
 */
import Database from "libsql";
import AsyncDatabase from "libsql/promise";
import { StoreUnavailable } from "../../store.ts";
import type { SqlDriver, SqlResult, SqlRow, SqlStatement, SqlValue } from "../sql/driver.ts";
import type { ThreadWriteLock } from "./thread-write-lock.ts";

/** Prepared statements kept per connection; past this many, the cache starts over. */
const MAX_PREPARED = 512;

export interface FileConnection {
  driver: SqlDriver;
  /** Closes the database once a write in flight is done; a write asked after it is refused. */
  close(): Promise<void>;
}

/**
 * How long a request waits for another process's write lock (a `formsink keys` command, a
 * `VACUUM`, an operator's `sqlite3` session) before it is answered 503.
 */
const LOCK_WAIT_MS = 5000;
/** The longest pause between two tries for the lock: bounds how late a freed lock is noticed. */
const MAX_RETRY_PAUSE_MS = 25;

/**
 * The write connection's page cache, in SQLite's negative-means-KiB form (its default is 2 MB).
 * bench/store.ts (bulk load): an import's batch of thousands of rows changes more pages than
 * the default holds, and SQLite then writes changed pages out to the WAL in the middle of the
 * transaction and reads them back. The cache grows only as pages are used.
 */
const WRITER_CACHE_SIZE = -32768;

/**
 * The read connection's page cache, in the same form. bench/events.ts (the changes feed): a page
 * looks up each created event's submission by id, all over the submissions' index; with the
 * default cache those index pages are read from the operating system again at every page.
 */
const READER_CACHE_SIZE = -32768;

/** Statements SQLite refuses inside a transaction. */
const OUTSIDE_TRANSACTION = /^\s*VACUUM\b/i;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface FileOptions {
  /**
   * Runs before each write and throws to refuse it: the CLI's server checks there that the
   * file at `path` is still the one it opened (a deleted or replaced file would take writes
   * that are lost at the next start). The core cannot look at files itself.
   */
  beforeWrite?: () => void;
  /**
   * One synchronous connection for reads and writes, as `:memory:` has: for a thread that does
   * nothing but this database's work (`formsink serve`'s webhook thread), which may wait in it.
   * Its commits then never queue in the binding's threads behind another connection's wait for
   * the lock this one holds.
   */
  synchronous?: boolean;
  /** Taken around every write transaction: shared with another thread's connection to this file (./thread-write-lock.ts). */
  writeLock?: ThreadWriteLock;
  /**
   * False: this connection's commits are not synced to disk one by one (`synchronous =
   * NORMAL`); the next synced commit of any connection to the file syncs them too, and a power
   * loss can lose only the latest of them, each whole. For writes that may be lost that way:
   * the webhook thread's claims and outcomes, which at-least-once delivery makes good by
   * sending again. Default true.
   */
  syncEachCommit?: boolean;
}

/**
 * Opens `path` (or `:memory:`). Another process's lock is waited for without blocking the event
 * loop: by the write connection in the binding's thread; on the synchronous connection,
 * SQLite's own busy handler would sleep in the only thread, stopping every request, so it is
 * off there and a busy statement is tried again on a timer until `LOCK_WAIT_MS`.
 */
export function openLibsqlFile(path: string, options: FileOptions = {}): FileConnection {
  // Opening may wait for the lock (switching to WAL): nothing is served yet, so waiting in the
  // binding is fine; from then on SQLite answers SQLITE_BUSY at once.
  const db = new Database(path, { timeout: LOCK_WAIT_MS });
  if (path !== ":memory:") {
    // WAL: readers never wait for the writer. FULL: each commit is on disk (the WAL fsynced)
    // before it returns, so an acknowledged write survives a power loss (README: durability).
    db.exec("PRAGMA journal_mode = WAL");
    db.exec(options.syncEachCommit === false ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = FULL");
  }
  // Deleted rows are overwritten with zeros, not left in free space: an erased person's data
  // must not stay readable in the file (docs/privacy.md, "What remains on disk").
  db.exec("PRAGMA secure_delete = ON");
  db.exec("PRAGMA busy_timeout = 0");
  db.exec(`PRAGMA cache_size = ${READER_CACHE_SIZE}`);
  const prepare = statementCache((sql) => db.prepare(sql));
  const run = ({ sql, args = [], asArrays, oneRow }: SqlStatement): SqlResult => {
    const { statement, reader } = prepare(sql, asArrays);
    if (reader && oneRow) {
      const row = statement.get(args as SqlValue[]) as SqlRow | undefined;
      return { rows: row === undefined ? [] : [row], rowsAffected: 0 };
    }
    if (reader) return { rows: statement.all(args as SqlValue[]) as SqlRow[], rowsAffected: 0 };
    return { rows: [], rowsAffected: statement.run(args as SqlValue[]).changes };
  };
  // BEGIN, COMMIT and ROLLBACK go through `exec`, never a kept statement: a kept statement that
  // failed with SQLITE_BUSY stays "in progress" until it is run again, and every later COMMIT
  // then fails ("SQL statements in progress"), which broke the store for good.
  const transaction = (statements: readonly SqlStatement[], mode: "read" | "write"): SqlResult[] => {
    if (mode === "write") options.beforeWrite?.();
    const locked = mode === "write" ? options.writeLock : undefined;
    locked?.acquireBlocking();
    try {
      db.exec(mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
      try {
        const results = statements.map(run);
        db.exec("COMMIT");
        return results;
      } catch (error) {
        if (db.inTransaction) db.exec("ROLLBACK");
        throw error;
      }
    } finally {
      locked?.release();
    }
  };
  const isWrite = (statement: SqlStatement) => !prepare(statement.sql, statement.asArrays).reader && !OUTSIDE_TRANSACTION.test(statement.sql);
  const closeReader = () => {
    // Moves every commit from the WAL into the file and empties the WAL: after a clean stop
    // the .db alone holds all the data, so copying just it (as people do) loses nothing.
    // (libSQL does not do it when the last connection closes, as SQLite does.) A checkpoint that
    // fails (a full disk: the file must grow to take the WAL's pages) loses nothing: the WAL
    // keeps every commit and the next open replays it, as after a crash. So the close still
    // succeeds, as SQLite's own close does then; a command that read or wrote its data is not
    // failed at its end for it.
    try {
      if (path !== ":memory:") db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // The WAL stays beside the file (see above).
    } finally {
      db.close();
    }
  };

  if (path === ":memory:" || options.synchronous) {
    // One connection holds the whole database (or the thread has nothing else to do).
    return {
      driver: {
        // A write alone still goes through BEGIN IMMEDIATE, as a file's does.
        execute: (statement) => patiently(() => (isWrite(statement) ? transaction([statement], "write")[0]! : run(statement))),
        batch: (statements, mode) => patiently(() => transaction(statements, mode)),
      },
      close: async () => closeReader(),
    };
  }

  const writes = openWriter(path, options);
  // SQLite's count of commits made by other connections, this file's writer among them: the
  // read connection itself never writes.
  const dataVersion = db.prepare("PRAGMA data_version").raw(true);
  return {
    driver: {
      changeVersion: () => (dataVersion.get() as [number])[0],
      // A read in WAL mode does not wait for writers; VACUUM cannot run inside a transaction.
      // Telling a read from a write prepares the statement, which reads the schema: that can be
      // refused for a lock too (the other connection opening the WAL of a file just made), so
      // it is tried again with the read. A write's own waits and faults are the writer's.
      execute: (statement) => patiently(() => (isWrite(statement) ? writes.transaction([statement]).then((results) => results[0]!) : run(statement))),
      batch: (statements, mode) => (mode === "write" ? writes.transaction(statements) : patiently(() => transaction(statements, "read"))),
    },
    close: async () => {
      try {
        await writes.close();
      } finally {
        closeReader();
      }
    },
  };
}

/** A prepare that keeps each statement, asking the binding once whether it returns rows. */
function statementCache<S extends { readonly reader: boolean; raw(toggle?: boolean): S }>(prepareNew: (sql: string) => S) {
  // Raw mode (rows as arrays) is a state of the prepared statement, so each mode has its own;
  // keyed by the SQL text itself, whose hash V8 keeps with a string the caller keeps.
  const prepared = { rows: new Map<string, { statement: S; reader: boolean }>(), arrays: new Map<string, { statement: S; reader: boolean }>() };
  return (sql: string, asArrays = false) => {
    const cache = asArrays ? prepared.arrays : prepared.rows;
    let entry = cache.get(sql);
    if (entry === undefined) {
      if (prepared.rows.size + prepared.arrays.size >= MAX_PREPARED) {
        prepared.rows.clear();
        prepared.arrays.clear();
      }
      const statement = prepareNew(sql);
      entry = { statement: asArrays ? statement.raw(true) : statement, reader: statement.reader };
      cache.set(sql, entry);
    }
    return entry;
  };
}

/**
 * The write connection of a file: one write transaction at a time, in the order asked. BEGIN
 * waits for another process's lock in the binding's thread (SQLite's busy handler, up to
 * `LOCK_WAIT_MS`) and COMMIT syncs there; the event loop is free during both.
 */
function openWriter(path: string, options: FileOptions) {
  const db = new AsyncDatabase(path, { timeout: LOCK_WAIT_MS });
  // As the read connection's settings (see there); the busy handler may sleep here, off the event loop.
  const ready = db.exec(`PRAGMA synchronous = FULL; PRAGMA secure_delete = ON; PRAGMA busy_timeout = ${LOCK_WAIT_MS}; PRAGMA cache_size = ${WRITER_CACHE_SIZE}`);
  const statements = new Map<string, Promise<AsyncStatement>>();
  const prepare = (sql: string): Promise<AsyncStatement> => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      if (statements.size >= MAX_PREPARED) statements.clear();
      statement = db.prepare(sql) as Promise<AsyncStatement>;
      statements.set(sql, statement);
      statement.catch(() => statements.delete(sql));
    }
    return statement;
  };
  const run = async ({ sql, args = [], asArrays }: SqlStatement): Promise<SqlResult> => {
    const statement = await prepare(sql);
    if (!statement.reader) return { rows: [], rowsAffected: statement.run(args as SqlValue[]).changes };
    statement.raw(asArrays === true);
    return { rows: (await statement.all(args as SqlValue[])) as SqlRow[], rowsAffected: 0 };
  };
  const transaction = async (statements: readonly SqlStatement[]): Promise<SqlResult[]> => {
    await ready;
    options.beforeWrite?.();
    await options.writeLock?.acquire();
    try {
      await db.exec("BEGIN IMMEDIATE");
      try {
        const results: SqlResult[] = [];
        for (const statement of statements) results.push(await run(statement));
        await db.exec("COMMIT");
        return results;
      } catch (error) {
        // The binding has `inTransaction` here too; its declared types leave it out.
        if ((db as unknown as { readonly inTransaction: boolean }).inTransaction) await db.exec("ROLLBACK");
        throw error;
      }
    } finally {
      options.writeLock?.release();
    }
  };
  // Each write starts when the one before it is done; the settings are the first call. Their
  // failure is each write's, when it awaits them.
  let last: Promise<unknown> = ready.catch(() => {});
  let closed = false;
  return {
    transaction(statements: readonly SqlStatement[]): Promise<SqlResult[]> {
      if (closed) return Promise.reject(new Error("The database is closed"));
      const result = last.then(() => transaction(statements)).catch((error: unknown) => {
        throw writeFault(error);
      });
      last = result.catch(() => {});
      return result;
    },
    // The binding aborts the process when a connection is closed under a call in flight (a
    // background prune, say), so the writes asked before are let finish first.
    async close() {
      closed = true;
      await last;
      db.close();
    },
  };
}

/** What the writer uses of a prepared `libsql/promise` statement. */
interface AsyncStatement {
  readonly reader: boolean;
  run(...args: unknown[]): { changes: number };
  all(...args: unknown[]): Promise<unknown[]>;
  raw(toggle?: boolean): AsyncStatement;
}

/**
 * A write's error as the driver reports it: another process's lock still held after the busy
 * handler's wait, like a storage fault, is `StoreUnavailable`.
 */
function writeFault(error: unknown): unknown {
  const code = primaryResultCode(error);
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new StoreUnavailable("busy", "The database is locked by another process; try again shortly", { cause: error });
  }
  return storageFault(error);
}

/**
 * Runs `work` (synchronous, all or nothing) until it is not refused for another process's lock,
 * pausing on a timer in between; storage faults become `StoreUnavailable`. A promise it returns
 * (a write handed to the writer) is passed on as it is.
 */
async function patiently<T>(work: () => T | Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS)) {
    try {
      return work();
    } catch (error) {
      const code = primaryResultCode(error);
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
  const code = primaryResultCode(error);
  if (code === "SQLITE_FULL") return new StoreUnavailable("full", "The database has no space left for this write", { cause: error });
  if (code === "SQLITE_READONLY") return new StoreUnavailable("read-only", "The database cannot be written (read-only file or directory)", { cause: error });
  // SQLite reports ENOSPC alone as SQLITE_FULL: a disk quota (EDQUOT), a file size limit
  // (EFBIG) and a failing device (EIO) are I/O errors.
  if (code === "SQLITE_IOERR") return new StoreUnavailable("io", "The database's disk failed to read or write (a disk quota or file size limit, or a failing disk)", { cause: error });
  if (code === "SQLITE_CORRUPT") return new StoreUnavailable("corrupt", "The database file is corrupt", { cause: error });
  return error;
}

/**
 * The primary result code of a libSQL error (`SQLITE_BUSY` of `SQLITE_BUSY_RECOVERY`), which
 * says what kind of failure it is: the binding names the extended code, and SQLite answers a
 * lock met while another connection recovers the WAL of a file just opened with
 * `SQLITE_BUSY_RECOVERY`, a lock like any other.
 */
export function primaryResultCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code : undefined;
}

/**
 * Whether a connection of any process has the database at `path` open. A connection to a
 * database in WAL mode (every formsink connection) holds a shared lock on it for as long as it
 * is open, even idle, so taking the file exclusively fails while one does; a process that died
 * holds no lock, so a file a crashed server left is not taken for one in use. A file that is not
 * a database is not open anywhere as far as this can tell; a missing one is created (empty).
 */
export function isOpenElsewhere(path: string): boolean {
  let db: InstanceType<typeof Database> | undefined;
  try {
    db = new Database(path, { timeout: 0 });
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("PRAGMA locking_mode = EXCLUSIVE");
    // In exclusive mode the first read takes the lock and keeps it until the connection closes.
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    return false;
  } catch (error) {
    const code = primaryResultCode(error);
    return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
  } finally {
    db?.close();
  }
}
