/**
 * A SQL store over an `@libsql/client` client: remote libSQL (Turso, sqld) over HTTP or
 * WebSockets, or any client the caller opened. Imports nothing native, so a Worker can bundle it.
 */
import type { Client, ResultSet } from "@libsql/client";
import type { CompleteStore, WebhookStore } from "../../store.ts";
import type { SqlDriver, SqlResult, SqlStatement } from "../sql/driver.ts";
import { createSqlStore, type SqlStoreOptions } from "../sql/store.ts";

/** A store over `client`; closing the store closes the client when `ownsClient`. */
export async function createLibsqlClientStore(client: Client, ownsClient: boolean, options: SqlStoreOptions = {}): Promise<CompleteStore> {
  try {
    return await createSqlStore(libsqlDriver(client), () => {
      if (ownsClient) client.close();
    }, options);
  } catch (error) {
    if (ownsClient) client.close();
    throw error;
  }
}

/** A `SqlDriver` over a libSQL client, for stores and tests that drive the SQL directly. */
export function libsqlDriver(client: Client): SqlDriver {
  return {
    execute: async (statement) => toResult(statement, await client.execute({ sql: statement.sql, args: [...(statement.args ?? [])] })),
    batch: async (statements, mode) => {
      const results = await client.batch(
        statements.map((statement) => ({ sql: statement.sql, args: [...(statement.args ?? [])] })),
        mode,
      );
      return results.map((result, i) => toResult(statements[i]!, result));
    },
  };
}

/** A client's rows are array-like and named at once: `asArrays` takes the array side. */
function toResult(statement: SqlStatement, result: ResultSet): SqlResult {
  const rows = statement.asArrays ? result.rows.map((row) => Array.from(row)) : result.rows;
  return { rows: rows as SqlResult["rows"], rowsAffected: result.rowsAffected };
}
