/**
 * The SubmissionStore for any SQLite-speaking database, over a `SqlDriver`: libSQL (a file,
 * `:memory:`, Turso) and Cloudflare D1 share every line of it.
 */
import type { SubmissionStore } from "../../store.js";
import type { SqlDriver } from "./driver.js";
/**
 * A store over `driver`, its schema brought up to date first. `close` runs when the store is
 * closed (a driver that owns its connection closes it there).
 */
export declare function createSqlStore(driver: SqlDriver, close?: () => void): Promise<SubmissionStore>;
