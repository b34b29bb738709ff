import { createSqlStore } from "../sql/store.js";
/** Opens (and migrates) the D1 database behind a binding as a submission store. */
export function createD1Store(database) {
    return createSqlStore(d1Driver(database));
}
/** A `SqlDriver` over a D1 binding. A D1 batch is one transaction, whatever its mode. */
export function d1Driver(database) {
    const prepare = ({ sql, args = [] }) => database.prepare(sql).bind(...args);
    return {
        execute: async (statement) => toResult(await prepare(statement).all()),
        batch: async (statements) => (await database.batch(statements.map(prepare))).map(toResult),
    };
}
function toResult(result) {
    return { rows: result.results, rowsAffected: result.meta.changes ?? 0 };
}
