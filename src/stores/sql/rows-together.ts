/**
 * Rows written by multi-row statements: as few statements as D1's bound values allow (100 a
 * statement), each text made once per number of rows, since the driver keeps a prepared
 * statement per text. A group commit's rows, created events and counts go this way
 * (group-creates.ts, group-counts.ts).
 */
import type { SqlStatement, SqlValue } from "./driver.ts";

/** Bound values per statement: D1 allows 100. */
const MAX_BOUND_VALUES = 100;

/**
 * Writes rows of `valuesPerRow` bound values each, in their order, by the statements `text`
 * makes for a number of rows (its `VALUES` holding that many rows of `valuesPerRow` "?").
 * `statementRows`, when given, makes the rows one statement binds of the rows it writes (what a
 * row binds may depend on the others of its statement).
 */
export function rowsTogether<Row extends readonly SqlValue[] = readonly SqlValue[]>(
  valuesPerRow: number,
  text: (rows: number) => string,
  statementRows?: (rows: readonly Row[]) => readonly (readonly SqlValue[])[],
): (rows: readonly Row[]) => SqlStatement[] {
  const rowsPerStatement = Math.floor(MAX_BOUND_VALUES / valuesPerRow);
  const texts: string[] = [];
  return (allRows) => {
    const statements: SqlStatement[] = [];
    for (let from = 0; from < allRows.length; from += rowsPerStatement) {
      const to = Math.min(allRows.length, from + rowsPerStatement);
      const [rows, first, last] = statementRows ? [statementRows(allRows.slice(from, to)), 0, to - from] : [allRows, from, to];
      const args: SqlValue[] = [];
      for (let i = first; i < last; i++) for (const value of rows[i]!) args.push(value);
      statements.push({ sql: (texts[to - from] ??= text(to - from)), args });
    }
    return statements;
  };
}

/** `VALUES`' rows for `rowsTogether`: `rows` rows of `values` placeholders each. */
export function placeholderRows(rows: number, values: number): string {
  const row = `(${Array(values).fill("?").join(", ")})`;
  return Array(rows).fill(row).join(", ");
}
