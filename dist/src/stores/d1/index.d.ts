/**
 * Cloudflare D1 as a submission store: `createD1Store(env.DB)` in a Worker. D1 is SQLite, so
 * this is the SQL store with a D1 driver; the schema is migrated on first use, like libSQL.
 */
import type { SubmissionStore } from "../../store.js";
import type { SqlDriver, SqlValue } from "../sql/driver.js";
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
    meta: {
        changes?: number;
    };
}
/** Opens (and migrates) the D1 database behind a binding as a submission store. */
export declare function createD1Store(database: D1Database): Promise<SubmissionStore>;
/** A `SqlDriver` over a D1 binding. A D1 batch is one transaction, whatever its mode. */
export declare function d1Driver(database: D1Database): SqlDriver;
