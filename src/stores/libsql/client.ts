/**
 * A SQL store over an `@libsql/client` client: remote libSQL (Turso, sqld) over HTTP or
 * WebSockets, or any client the caller opened. Imports nothing native, so a Worker can bundle it.
 */
import type { Client } from "@libsql/client";
import type { SubmissionStore } from "../../store.ts";
import type { SqlDriver } from "../sql/driver.ts";
import { createSqlStore } from "../sql/store.ts";

/** A store over `client`; closing the store closes the client when `ownsClient`. */
export async function createLibsqlClientStore(client: Client, ownsClient: boolean): Promise<SubmissionStore> {
  try {
    return await createSqlStore(libsqlDriver(client), () => {
      if (ownsClient) client.close();
    });
  } catch (error) {
    if (ownsClient) client.close();
    throw error;
  }
}

/** A `SqlDriver` over a libSQL client, for stores and tests that drive the SQL directly. */
export function libsqlDriver(client: Client): SqlDriver {
  return {
    execute: async (statement) => {
      const result = await client.execute({ sql: statement.sql, args: [...(statement.args ?? [])] });
      return { rows: result.rows, rowsAffected: result.rowsAffected };
    },
    batch: async (statements, mode) => {
      const results = await client.batch(
        statements.map((statement) => ({ sql: statement.sql, args: [...(statement.args ?? [])] })),
        mode,
      );
      return results.map((result) => ({ rows: result.rows, rowsAffected: result.rowsAffected }));
    },
  };
}
