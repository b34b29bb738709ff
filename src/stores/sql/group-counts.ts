/**
 * The counts of a group commit of creates, kept once per group instead of row by row. While a
 * group's batches run, the insert trigger of the counts stands aside, as it does for an import
 * (migrations 11 and 15); after them, each table of counts takes the group's rows in one upsert,
 * from the counts per account, tuple and day worked out here from the creates themselves. An
 * import counts its rows in SQL from the rows it inserted (import.ts), since its inserts skip
 * ids the account has; a group's creates each insert their row or fail, and for a group's few
 * rows those statements cost about what the triggers do. All of it is in the group's
 * transaction, so totals are exact at every commit. When the group's transaction fails, each
 * batch runs again alone (group-commit.ts), counted by the trigger.
 */
import type { SqlStatement, SqlValue } from "./driver.ts";
import type { GroupWork } from "./group-commit.ts";
import { DAY_MS } from "./counting.ts";
import { placeholderRows, rowsTogether } from "./rows-together.ts";
import { SUBMISSION_ROW_COLUMNS } from "./submission-row.ts";

/** Sets the count trigger aside for the rest of the transaction, the identifier index's not (migration 15). */
const COUNT_TRIGGER_ASIDE: SqlStatement = { sql: "INSERT INTO submission_import (rowid_before, counts_only) VALUES (0, 1)" };

/** Ends what COUNT_TRIGGER_ASIDE started, before the commit: no reader ever sees its row. */
const COUNT_TRIGGER_BACK: SqlStatement = { sql: "DELETE FROM submission_import" };

/**
 * A create of a group: the row it inserts (it inserts it, or its batch fails), an INSERT that
 * binds the account and then SUBMISSION_ROW_COLUMNS, as submissionToRow writes them.
 */
export interface CountedCreate {
  row: SqlStatement;
}

/** Where a create's row binds each column the counts are keyed by (the account first). */
const ROW_ARG = (() => {
  const columns = ["account_id", ...SUBMISSION_ROW_COLUMNS.split(", ")];
  const at = (column: string) => columns.indexOf(column);
  return { accountId: at("account_id"), popupId: at("popup_id"), domain: at("domain"), device: at("device"), status: at("status"), createdAt: at("created_at") };
})();

/**
 * The fewest trigger runs a group's counts must save to be kept together: the creates beyond
 * one per account, tuple and day. The statements that stand in for the trigger cost about one
 * trigger run per row they add, and some more for the group: a group of few creates, or of
 * creates that share no counts, is counted by the trigger.
 */
const FEWEST_SAVED = 4;

/** The upserts adding rows of key (`columns`) and count to the table of counts `table`. */
function countUpserts(table: string, columns: readonly string[]): (rows: readonly (readonly SqlValue[])[]) => SqlStatement[] {
  return rowsTogether(columns.length + 1, (rows) => `INSERT INTO ${table} (${columns.join(", ")}, n)
      VALUES ${placeholderRows(rows, columns.length + 1)}
      ON CONFLICT DO UPDATE SET n = n + excluded.n`);
}

const TUPLE = ["account_id", "popup_id", "domain", "device", "status"] as const;
const COUNTS = countUpserts("submission_counts", TUPLE);
const DAY_COUNTS = countUpserts("submission_day_counts", [...TUPLE, "day"]);
const VALUE_DAYS = countUpserts("submission_value_days", ["account_id", "field", "day", "value"]);
const ALL_POPUPS_DAYS = countUpserts("submission_day_counts_all_popups", ["account_id", "domain", "device", "status", "day"]);

// bench/http.ts (create): the count triggers' row updates per create cost more than a
// group's one upsert per table of counts.
/**
 * The statements around a group commit of `creates` that keep its rows' counts once for the
 * group; undefined when the trigger should keep them (too few creates share their counts). A
 * write that changes or deletes an existing submission must never be in such a group: its
 * count triggers would take from counts the group has not added yet.
 */
export function createsCountedTogether(creates: readonly CountedCreate[]): Omit<GroupWork, "inGroup"> | undefined {
  if (creates.length <= FEWEST_SAVED) return undefined;
  // The rows per account, tuple and day first (a group's rows mostly share one), then every
  // table's counts from those.
  const dayCounts = new Counted();
  for (const { row } of creates) {
    const values = row.args!;
    // The row's values, and the day of its `created_at` (epoch milliseconds) as the trigger's `dayOf` numbers it.
    dayCounts.add([
      values[ROW_ARG.accountId] as string, values[ROW_ARG.popupId] as string, values[ROW_ARG.domain] as string,
      values[ROW_ARG.device] as string, values[ROW_ARG.status] as string, Math.floor((values[ROW_ARG.createdAt] as number) / DAY_MS),
    ], 1);
  }
  if (creates.length - dayCounts.size < FEWEST_SAVED) return undefined;
  const counts = new Counted();
  const valueDays = new Counted();
  const allPopupsDays = new Counted();
  for (const row of dayCounts.rows()) {
    const [accountId, popupId, domain, device, status, day, n] = row as [string, string, string, string, string, number, number];
    counts.add([accountId, popupId, domain, device, status], n);
    allPopupsDays.add([accountId, domain, device, status, day], n);
    valueDays.add([accountId, "popup_id", day, popupId], n);
    valueDays.add([accountId, "domain", day, domain], n);
    valueDays.add([accountId, "device", day, device], n);
    valueDays.add([accountId, "status", day, status], n);
  }
  return {
    first: [COUNT_TRIGGER_ASIDE],
    last: [...counts.added(COUNTS), ...dayCounts.added(DAY_COUNTS), ...allPopupsDays.added(ALL_POPUPS_DAYS), ...valueDays.added(VALUE_DAYS), COUNT_TRIGGER_BACK],
  };
}

/** How many rows of a group have each key (the columns a table of counts is keyed by), as rows of the key and the count. */
class Counted {
  readonly #rows = new Map<string, (string | number)[]>();

  add(key: readonly (string | number)[], n: number): void {
    // Each part's length before it: no two keys make the same text. (JSON.stringify costs more.)
    let text = "";
    for (const part of key) text += `${String(part).length}:${part}`;
    const row = this.#rows.get(text);
    if (row === undefined) this.#rows.set(text, [...key, n]);
    else (row[key.length] as number) += n;
  }

  get size(): number {
    return this.#rows.size;
  }

  rows(): Iterable<(string | number)[]> {
    return this.#rows.values();
  }

  /** The statements adding every key's count to a table, by its `countUpserts`. */
  added(upserts: (rows: readonly (readonly SqlValue[])[]) => SqlStatement[]): SqlStatement[] {
    return upserts([...this.#rows.values()]);
  }
}
