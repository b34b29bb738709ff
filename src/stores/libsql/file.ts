/**
 * Embedded libSQL (a file or `:memory:`) through the `libsql` binding directly, which
 * `@libsql/client` itself runs on: one connection, each statement prepared once and kept,
 * and a batch is BEGIN ... COMMIT around synchronous calls. Through `@libsql/client` every
 * call prepares its statement again and builds each row with `Object.defineProperty`, which
 * cost more than the queries themselves (bench/README.md).
 */
import Database from "libsql";
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
 * Opens `path` (or `:memory:`). Writers of other processes (a `formsink keys` command next to
 * the server) are waited for up to 5 s instead of failing at once with SQLITE_BUSY.
 */
export function openLibsqlFile(path: string): FileConnection {
  const db = new Database(path, { timeout: 5000 });
  if (path !== ":memory:") {
    // WAL: readers never wait for the writer. FULL: each commit is on disk (the WAL fsynced)
    // before it returns, so an acknowledged write survives a power loss (README: durability).
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
  }
  // Deleted rows are overwritten with zeros, not left in free space: an erased person's data
  // must not stay readable in the file (docs/privacy.md, "What remains on disk").
  db.exec("PRAGMA secure_delete = ON");
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
  const batch = (statements: readonly SqlStatement[], mode: "read" | "write"): SqlResult[] => {
    prepare(mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED").statement.run();
    try {
      const results = statements.map(run);
      prepare("COMMIT").statement.run();
      return results;
    } catch (error) {
      if (db.inTransaction) prepare("ROLLBACK").statement.run();
      throw error;
    }
  };
  return {
    driver: {
      execute: async (statement) => run(statement),
      batch: async (statements, mode) => batch(statements, mode),
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
