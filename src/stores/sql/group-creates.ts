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
import type { SqlStatement } from "./driver.ts";
import { createdEventsTogether } from "./events.ts";
import type { GroupWork } from "./group-commit.ts";
import { type CountedCreate, createsCountedTogether } from "./group-counts.ts";
import { placeholderRows, rowsTogether } from "./rows-together.ts";
import { SUBMISSION_ROW_COLUMN_COUNT, SUBMISSION_ROW_COLUMNS } from "./submission-row.ts";

/**
 * A create's mark: two statements of its batch that the group may write with the others'
 * instead: the row's INSERT (which binds the account and then SUBMISSION_ROW_COLUMNS; it inserts
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

/** Values bound per row: the account and SUBMISSION_ROW_COLUMNS. */
const ROW_VALUES = SUBMISSION_ROW_COLUMN_COUNT + 1;

// bench/http.ts (create): a group's rows cost less in one statement than one statement each.
/** The rows of creates' INSERTs (the account, then SUBMISSION_ROW_COLUMNS), in their order, by as few statements as D1 allows. */
const submissionRowsTogether = rowsTogether(ROW_VALUES, (rows) => `INSERT INTO submissions (account_id, ${SUBMISSION_ROW_COLUMNS}) VALUES ${placeholderRows(rows, ROW_VALUES)}`);

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
  const rows = submissionRowsTogether(marks.map((mark) => mark.row.args ?? []));
  const events = createdEventsTogether(marks.map((mark) => mark.event));
  const counted = createsCountedTogether(marks);
  return {
    // The count trigger stands aside before the rows go in.
    first: [...(counted?.first ?? []), ...rows],
    last: [...events, ...(counted?.last ?? [])],
    inGroup: withoutRowAndEvent,
  };
}
