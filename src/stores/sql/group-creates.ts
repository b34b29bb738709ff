/**
 * What a group commit of creates writes once for the group instead of once per create: its
 * rows' counts (group-counts.ts) and its created events, as few multi-row statements after its
 * rows (events.ts, `createdEventsTogether`). Every create's row, counts and event are still in
 * the one transaction of the group; when it fails, each batch runs again alone with its own
 * event (group-commit.ts), counted by the trigger.
 *
 * A group's events come after all its rows, in the order of its creates, so they take their
 * positions in the log after any event of another write in the group: the log reads as if
 * those writes had committed before the creates. None of them reads the submissions.
 */
import type { Submission } from "../../submission.ts";
import type { SqlStatement } from "./driver.ts";
import { createdEventsTogether } from "./events.ts";
import type { GroupWork } from "./group-commit.ts";
import { createsCountedTogether } from "./group-counts.ts";

/**
 * A create's mark: the row it inserts (it inserts it, or its batch fails), and its created
 * event, a statement of its batch that the group may write with the others' instead.
 */
export interface CreateMark {
  accountId: string;
  submission: Submission;
  event: SqlStatement;
}

/**
 * A grouped write's mark: a create's, or `uncounted` for a write that may insert a row the
 * group cannot know of ahead (an idempotent create's insert and its event depend on who holds
 * its key).
 */
export type GroupedCreate = CreateMark | "uncounted";

/** A create's statements in a group that writes the events together: all but its event. */
const withoutEvent = (statements: readonly SqlStatement[], mark: GroupedCreate) =>
  mark === "uncounted" ? statements : statements.filter((statement) => statement !== mark.event);

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
  const events = createdEventsTogether(marks.map((mark) => mark.event));
  const counted = createsCountedTogether(marks);
  return {
    first: counted?.first ?? [],
    last: [...events, ...(counted?.last ?? [])],
    inGroup: withoutEvent,
  };
}
