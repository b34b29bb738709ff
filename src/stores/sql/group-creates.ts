/**
 * What a group commit of creates writes once for the group instead of once per create: its
 * rows, by as few multi-row statements as D1's bound values allow (`submissionRowsTogether`),
 * their counts (group-counts.ts) and their created events, likewise after all the rows
 * (events.ts, `createdEventsTogether`). Every create's row, counts and event are still in the
 * one transaction of the group, each row's insert triggers still run for it, and a row that
 * breaks a constraint fails the group's transaction: then each batch runs again alone, with
 * its own row and event (group-commit.ts), counted by the trigger.
 *
 * A group's rows come first and its events after all of them, in the order of its creates, so
 * they take their places after those of any other write in the group: the log reads as if those
 * writes had committed before the creates. None of them reads the submissions.
 */
import type { SqlStatement, SqlValue } from "./driver.ts";
import { createdEventsTogether } from "./events.ts";
import type { GroupWork } from "./group-commit.ts";
import { type CountedCreate, createsCountedTogether } from "./group-counts.ts";
import { SUBMISSION_COLUMN_COUNT, SUBMISSION_COLUMNS } from "./submission-row.ts";

/**
 * A create's mark: two statements of its batch that the group may write with the others'
 * instead: the row's INSERT (which binds the account and then SUBMISSION_COLUMNS; it inserts
 * the row, or its batch fails) and its created event.
 */
export interface CreateMark extends CountedCreate {
  event: SqlStatement;
}

/**
 * A grouped write's mark: a create's, or `uncounted` for a write that may insert a row the
 * group cannot know of ahead (an idempotent create's insert and its event depend on who holds
 * its key).
 */
export type GroupedCreate = CreateMark | "uncounted";

/** A create's statements in a group that writes the rows and events together: all but those two. */
const withoutRowAndEvent = (statements: readonly SqlStatement[], mark: GroupedCreate) =>
  mark === "uncounted" ? statements : statements.filter((statement) => statement !== mark.row && statement !== mark.event);

/** Values bound per row of `submissionRowsTogether`: the account and SUBMISSION_COLUMNS. */
const ROW_VALUES = SUBMISSION_COLUMN_COUNT + 1;

/** Rows per statement of `submissionRowsTogether`: D1 allows 100 bound values a statement. */
const ROWS_PER_STATEMENT = Math.floor(100 / ROW_VALUES);

/** The texts of `submissionRowsTogether`'s statements, by their number of rows (the driver keeps a prepared statement per text). */
const rowsTexts: string[] = [];

// bench/http.ts (create): a group's rows cost less in one statement than one statement each.
/** The rows of creates' INSERTs (the account, then SUBMISSION_COLUMNS), in their order, by as few statements as D1 allows. */
function submissionRowsTogether(rows: readonly SqlStatement[]): SqlStatement[] {
  const statements: SqlStatement[] = [];
  for (let from = 0; from < rows.length; from += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(from, from + ROWS_PER_STATEMENT);
    const sql = (rowsTexts[chunk.length] ??= `INSERT INTO submissions (account_id, ${SUBMISSION_COLUMNS}) VALUES ${Array(chunk.length).fill(`(${Array(ROW_VALUES).fill("?").join(", ")})`).join(", ")}`);
    const args: SqlValue[] = [];
    for (const row of chunk) for (const value of row.args ?? []) args.push(value);
    statements.push({ sql, args });
  }
  return statements;
}

/**
 * The statements around a group commit of `creates` (the marks of its batches), and which of
 * each create's own statements run in it; undefined for a group whose creates are each written
 * as alone (one create, or a write whose row the group cannot count).
 */
export function createsWrittenTogether(creates: readonly GroupedCreate[]): GroupWork<GroupedCreate> | undefined {
  if (creates.length < 2) return undefined;
  const marks: CreateMark[] = [];
  for (const create of creates) {
    if (create === "uncounted") return undefined;
    marks.push(create);
  }
  const rows = submissionRowsTogether(marks.map((mark) => mark.row));
  const events = createdEventsTogether(marks.map((mark) => mark.event));
  const counted = createsCountedTogether(marks);
  return {
    // The count trigger stands aside before the rows go in.
    first: [...(counted?.first ?? []), ...rows],
    last: [...events, ...(counted?.last ?? [])],
    inGroup: withoutRowAndEvent,
  };
}
