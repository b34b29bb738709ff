/**
 * The little a SQL store needs from a SQLite-speaking database. The libSQL client and Cloudflare
 * D1 each get a few-line driver; every query, migration and rule of the store lives once in
 * `createSqlStore`.
 *
 * Only single statements and atomic batches: D1 and libSQL over HTTP have no interactive
 * transactions, so nothing in the store may need one.
 */
export type SqlValue = string | number | null;

export interface SqlStatement {
  sql: string;
  args?: readonly SqlValue[];
  /**
   * Rows as arrays of the selected values, in the SELECT list's order (`row[0]`), instead of
   * objects by column name: for pages of submissions, where an object per row costs more than
   * the query.
   */
  asArrays?: true;
  /**
   * The statement returns at most one row (a lookup by key): a driver may read just that row,
   * which the libSQL binding does in one call (bench/http.ts: get by id and every key check).
   */
  oneRow?: true;
}

/** A row by column name; with `asArrays`, an array (read it through `arrayRows`). */
export type SqlRow = Record<string, unknown>;

/** The rows of a result of an `asArrays` statement, typed as what they are. */
export function arrayRows(result: SqlResult): unknown[][] {
  return result.rows as unknown as unknown[][];
}

export interface SqlResult {
  rows: SqlRow[];
  /**
   * Rows changed by an INSERT, UPDATE or DELETE: zero when it changed none, but otherwise D1
   * also counts the rows its triggers changed, so only `> 0` is portable.
   */
  rowsAffected: number;
}

export interface SqlDriver {
  execute(statement: SqlStatement): Promise<SqlResult>;
  /** Runs every statement in one transaction: all of them take effect, or none. */
  batch(statements: readonly SqlStatement[], mode: "read" | "write"): Promise<SqlResult[]>;
  /**
   * A number that is another one as soon as any write has been committed to the database since
   * it was last asked: by this driver, another connection or another process. A store may keep
   * what it read for as long as the number stays the same. Left out where the database cannot
   * tell at once (D1, libSQL over HTTP): the store then reads again each time.
   */
  changeVersion?(): number;
}

/** Whether the database refused a value for its length (D1's SQLITE_TOOBIG past 2 MB). */
export function valueTooBig(error: unknown): boolean {
  return /too big|TOOBIG/i.test(error instanceof Error ? error.message : String(error));
}

/** A BLOB as the driver gives it (a Buffer, an ArrayBuffer, or D1's array of numbers), as bytes. */
export function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (Array.isArray(value)) return Uint8Array.from(value as number[]);
  return new TextEncoder().encode(String(value));
}
