/**
 * Which `data` fields the identifier index of a SQL database holds (migration 5): the table
 * `identifying_fields`, which the index's triggers read. The database remembers them (`email`
 * from the start); a store opened with the option brings the table in line with it: a field
 * added is indexed from every existing row, a field removed takes its index rows along, both in
 * one transaction. A store opened without the option (the CLI, say) keeps what is there.
 */
import { compareByCodePoint } from "../../text-order.ts";
import type { SqlDriver, SqlStatement } from "./driver.ts";

/** The ids of the account's submissions whose `field` holds `value`: one index range, whatever the account's size. */
export function identifierLookup(accountId: string, field: string, value: string): SqlStatement {
  return {
    sql: `SELECT submission_id FROM submission_identifiers
          WHERE account_id = ? AND field = ? AND value_key = (CASE ? WHEN 'email' THEN lower(?) ELSE ? END)`,
    args: [accountId, field, field, value, value],
  };
}

/** Makes `fields` (when given) the database's identifying fields and returns them, sorted and distinct. */
export async function useIdentifyingFields(driver: SqlDriver, fields: readonly string[] | undefined): Promise<readonly string[]> {
  const { rows } = await driver.execute({ sql: "SELECT field FROM identifying_fields" });
  const current = new Set(rows.map((row) => String(row.field)));
  const wanted = [...new Set(fields ?? current)].sort(compareByCodePoint);
  const added = wanted.filter((field) => !current.has(field));
  const removed = [...current].filter((field) => !wanted.includes(field));
  if (added.length === 0 && removed.length === 0) return wanted;
  const addedJson = JSON.stringify(added);
  const removedJson = JSON.stringify(removed);
  await driver.batch(
    [
      { sql: "DELETE FROM identifying_fields WHERE field IN (SELECT value FROM json_each(?))", args: [removedJson] },
      { sql: "DELETE FROM submission_identifiers WHERE field IN (SELECT value FROM json_each(?))", args: [removedJson] },
      { sql: "INSERT OR IGNORE INTO identifying_fields (field) SELECT value FROM json_each(?)", args: [addedJson] },
      {
        sql: `INSERT OR IGNORE INTO submission_identifiers (account_id, field, value_key, submission_id)
              SELECT submissions.account_id, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, submissions.id
              FROM submissions, json_each(submissions.data) AS data_field
              WHERE data_field.type = 'text' AND data_field.key IN (SELECT value FROM json_each(?))`,
        args: [addedJson],
      },
    ],
    "write",
  );
  return wanted;
}
