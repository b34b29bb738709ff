/**
 * The little of `libsql/promise` that src/stores/libsql/file.ts uses, for the core typecheck
 * (tsconfig.core.json) only, as libsql-core.d.ts is for `libsql`.
 */
interface Statement {
  readonly reader: boolean;
  run(...args: unknown[]): { changes: number };
  all(...args: unknown[]): Promise<unknown[]>;
  raw(toggle?: boolean): Statement;
}
declare class Database {
  constructor(path: string, options?: { timeout?: number });
  readonly inTransaction: boolean;
  exec(sql: string): Promise<void>;
  prepare(sql: string): Promise<Statement>;
  close(): void;
}
export default Database;
