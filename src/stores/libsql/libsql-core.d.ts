/**
 * The little of the `libsql` binding's API that src/stores/libsql/file.ts uses, for the core
 * typecheck (tsconfig.core.json) only: the package's own types reference Node's, which would
 * let Node globals slip into the web-only check. The full check uses the package's types.
 */
interface Statement {
  readonly reader: boolean;
  run(...args: unknown[]): { changes: number };
  all(...args: unknown[]): unknown[];
  get(...args: unknown[]): unknown;
  raw(toggle?: boolean): Statement;
}
declare class Database {
  constructor(path: string, options?: { timeout?: number });
  readonly inTransaction: boolean;
  exec(sql: string): this;
  prepare(sql: string): Statement;
  close(): this;
}
export default Database;
