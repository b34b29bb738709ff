/**
 * The default store: libSQL through `@libsql/client`. The same code serves an embedded file
 * (`file:formsink.db`), `:memory:` and a remote libSQL server such as Turso
 * (`libsql://...` with an auth token).
 */
import { createClient } from "@libsql/client";
import { createSqlStore } from "../sql/store.js";
export const DEFAULT_DATABASE_URL = "file:formsink.db";
/** Opens (and migrates) a libSQL database as a submission store. */
export async function createLibsqlStore(options = {}) {
    const ownsClient = options.client === undefined;
    const client = options.client ??
        createClient({
            url: options.url ?? DEFAULT_DATABASE_URL,
            authToken: options.authToken,
            // Wait for another process's write lock (e.g. two servers migrating one file) instead of
            // failing at once with SQLITE_BUSY.
            timeout: 5000,
        });
    try {
        if (client.protocol === "file" && !isInMemory(options.url)) {
            // WAL lets readers run while a write commits; the mode is stored in the file.
            await client.execute("PRAGMA journal_mode = WAL");
        }
        return await createSqlStore(libsqlDriver(client), () => {
            if (ownsClient)
                client.close();
        });
    }
    catch (error) {
        if (ownsClient)
            client.close();
        throw error;
    }
}
/** True for a libSQL URL of a database that lives only in this process. */
export function isInMemory(url) {
    return url !== undefined && /^(file:)?:memory:/.test(url);
}
/** A `SqlDriver` over a libSQL client, for stores and tests that drive the SQL directly. */
export function libsqlDriver(client) {
    return {
        execute: async (statement) => {
            const result = await client.execute({ sql: statement.sql, args: [...(statement.args ?? [])] });
            return { rows: result.rows, rowsAffected: result.rowsAffected };
        },
        batch: async (statements, mode) => {
            const results = await client.batch(statements.map((statement) => ({ sql: statement.sql, args: [...(statement.args ?? [])] })), mode);
            return results.map((result) => ({ rows: result.rows, rowsAffected: result.rowsAffected }));
        },
    };
}
