/**
 * Cloudflare D1 as a submission store: `createD1Store(env.DB)` in a Worker. D1 is SQLite, so
 * this is the SQL store with a D1 driver; the schema is migrated on first use, like libSQL.
 */
import type { CompleteStore, WebhookStore } from "../../store.ts";
import type { SqlDriver, SqlResult, SqlRow, SqlStatement, SqlValue } from "../sql/driver.ts";
import { createSqlStore, type SqlStoreOptions } from "../sql/store.ts";

/**
 * The part of a D1 binding the store uses, so that this module needs no Workers types: a real
 * `D1Database` fits it.
 */
export interface D1Database {
  prepare(query: string): D1PreparedStatement;
  batch(statements: D1PreparedStatement[]): Promise<D1Result[]>;
}

export interface D1PreparedStatement {
  bind(...values: SqlValue[]): D1PreparedStatement;
  all(): Promise<D1Result>;
}

export interface D1Result {
  results: unknown[];
  meta: { changes?: number };
}

/** Opens (and migrates) the D1 database behind a binding as a submission store. */
export function createD1Store(database: D1Database, options: SqlStoreOptions = {}): Promise<CompleteStore> {
  return createSqlStore(d1Driver(database), undefined, options);
}

/** A `SqlDriver` over a D1 binding. A D1 batch is one transaction, whatever its mode. */
export function d1Driver(database: D1Database): SqlDriver {
  const prepare = ({ sql, args = [] }: { sql: string; args?: readonly SqlValue[] }) =>
    database.prepare(sql).bind(...args);
  return {
    execute: async (statement) => toResult(statement, await prepare(statement).all()),
    batch: async (statements) => (await database.batch(statements.map(prepare))).map((result, i) => toResult(statements[i]!, result)),
  };
}

/** D1 rows are objects in the SELECT list's order (a batch has no raw mode): `asArrays` takes their values. */
function toResult(statement: SqlStatement, result: D1Result): SqlResult {
  const rows = statement.asArrays ? (result.results as SqlRow[]).map((row) => Object.values(row)) : result.results;
  return { rows: rows as SqlRow[], rowsAffected: result.meta.changes ?? 0 };
}
