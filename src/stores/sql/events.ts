/**
 * The change log in SQL: the statements each write path adds to its own batch, so that an
 * event is committed with its change or not at all, and the reads of the log. Every event
 * statement is guarded by the same condition as its change (an INSERT ... SELECT that selects
 * nothing when the change does nothing): no interactive transaction is needed. Each row keeps
 * the event's JSON text, so a page is read out without parsing and re-serialising; a created
 * event's data is the submission's row, read with it (see migration 5).
 */
import type { ChangeEvent } from "../../events.ts";
import { eventIdStart, newEventId } from "../../events.ts";
import { formatInstant } from "../../instant.ts";
import { type EventPage, type EventQuery, type EventTextPage, parsedEventPage } from "../../store.ts";
import type { DeletionReason, Submission, SubmissionStatus } from "../../submission.ts";
import { joinBytes } from "../../bytes.ts";
import { arrayRows, bytesOf, type SqlDriver, type SqlStatement, type SqlValue } from "./driver.ts";
import { readInHalves } from "./read-in-halves.ts";
import { rowsTogether } from "./rows-together.ts";
import { holdsLineBreak, submissionJson } from "./submission-row.ts";

const EVENT_COLUMNS = "account_id, type, at, popup_id, submission_id, created_status, event, submission_rowid, account_position";

/**
 * The newest position of the account `account` (an SQL expression) in its log (migration 22):
 * its newest event's, or, when none is kept, the newest pruned. Each event is written one past
 * it, inside the write, so, SQLite having one writer, positions are dense and follow commit
 * order, and no other account's events count.
 */
export const newestPosition = (account: string) =>
  `COALESCE((SELECT MAX(account_position) FROM events WHERE account_id = ${account}),
    (SELECT pruned_through FROM event_horizons WHERE account_id = ${account}), 0)`;
const nextPosition = (account: string) => `${newestPosition(account)} + 1`;

/** A created event's stored text: the event's JSON up to its data, which is read from the row. */
function createdEventText(now: number): string {
  return `{"id":"${newEventId(now)}","type":"submission.created","timestamp":"${formatInstant(now)}","data":`;
}

/**
 * An event row's JSON text as the API shows it, written by SQLite without parsing any JSON. A
 * created event's data is the submission as stored, with the status it was created with, or,
 * once it is deleted, `{submissionId, popupId}`.
 */
export const EVENT_JSON = eventJson();

// bench/events.ts: looking for line breaks in every created event's data cost SQLite more than JavaScript's look at the page's text.
/**
 * EVENT_JSON with a created event's data as stored, not looked at for raw line breaks: the
 * feed looks for them in the page's text (`holdsLineBreak`) and, when a row edited by hand
 * holds one, reads the page again with EVENT_JSON. Nothing else in an event's text can hold
 * one: the rest is written by json_object, json_quote or formsink, or vouched for by plain_text.
 */
const EVENT_JSON_AS_STORED = eventJson({ dataAsStored: true });

function eventJson(options: { dataAsStored?: true } = {}): string {
  // The submission row as the created event's data, with the status the event holds (the only
  // field that changes), in one printf; NULL when the row is gone. The row's text fields go in
  // unquoted where its plain_text vouches for them; the event's status, which no CHECK bounds,
  // is always quoted.
  const createdWithData = submissionJson((column) => (column === "status" ? "events.created_status" : `submissions.${column}`), {
    before: "events.event",
    after: "}",
    plain: (column) => column !== "status",
    ...options,
  });
  // Found by the rowid the row had when the event was written, one lookup (checked to be that
  // row: VACUUM may renumber rowids), else by its id (migration 14's comment).
  const createdSubmission = ["submissions.rowid = events.submission_rowid AND ", ""].map(
    (byRowid) => `(SELECT ${createdWithData} FROM submissions WHERE ${byRowid}submissions.account_id = events.account_id AND submissions.id = events.submission_id)`,
  );
  return `CASE WHEN events.type = 'submission.created' THEN COALESCE(
    ${createdSubmission.join(",\n    ")},
    events.event || '{"submissionId":' || json_quote(events.submission_id) || ',"popupId":' || json_quote(events.popup_id) || '}}')
  ELSE events.event END`;
}

/** `json_object` of an event with these id, type, time (bound values) and data (an SQL expression). */
const eventObject = (type: ChangeEvent["type"], data: string) => `json_object('id', ?, 'type', '${type}', 'timestamp', ?, 'data', ${data})`;

/** A created event's values as `createdEvent` binds them: account, time, popup, id, status, text, and its row's rowid by account and id. */
const CREATED_EVENT_VALUES = "?, 'submission.created', ?, ?, ?, ?, ?, (SELECT rowid FROM submissions WHERE account_id = ? AND id = ?)";

/**
 * Made once: a statement's text is its key in the driver's cache of prepared statements. Without
 * a condition, a row of VALUES: an INSERT ... SELECT that reads the table it inserts into has
 * SQLite write the rows it selects aside first, which costs a create more than the read of its
 * position does.
 */
const CREATED_EVENT = `INSERT INTO events (${EVENT_COLUMNS}) VALUES (${CREATED_EVENT_VALUES}, ${nextPosition("?")})`;
const CREATED_EVENT_IF = `INSERT INTO events (${EVENT_COLUMNS}) SELECT ${CREATED_EVENT_VALUES}, ${nextPosition("?")}`;

/** The created event of `s`; with `when`, only if that condition holds when it runs. */
export function createdEvent(accountId: string, s: Submission, now: number, when?: { sql: string; args: readonly SqlValue[] }): SqlStatement {
  return {
    sql: when ? `${CREATED_EVENT_IF} WHERE ${when.sql}` : CREATED_EVENT,
    args: [accountId, now, s.popupId, s.submissionId, s.status, createdEventText(now), accountId, s.submissionId, accountId, accountId, ...(when?.args ?? [])],
  };
}

/**
 * Created events of any accounts, each a row of CREATED_EVENT_VALUES after how many rows of its
 * account come before it in the statement, in their order. Each takes the next position of its
 * account and the ones after it: the rows are all read before any goes in (the statement reads
 * `events`, so SQLite writes what it reads aside first), so each account's next position is
 * read as the statement found it.
 */
const createdEventsStatements = rowsTogether<SqlValue[]>(
  9,
  (rows) => `INSERT INTO events (${EVENT_COLUMNS})
    SELECT column2, column3, column4, column5, column6, column7, column8, column9, ${nextPosition("column2")} + column1
    FROM (VALUES ${Array(rows).fill(`(?, ${CREATED_EVENT_VALUES})`).join(", ")})`,
  (rows) => {
    const before = new Map<SqlValue, number>();
    return rows.map((row) => {
      const account = row[0]!;
      const earlier = before.get(account) ?? 0;
      before.set(account, earlier + 1);
      return [earlier, ...row];
    });
  },
);

// bench/http.ts (create): a group's events cost less in one statement than one statement each.
/**
 * The created events `createdEvent` made (without a condition), written by as few statements
 * as D1's bound values allow, in their order: the rows each selects its submission's rowid
 * from must be inserted before these run.
 */
export function createdEventsTogether(events: readonly SqlStatement[]): SqlStatement[] {
  // All but the last two values `createdEvent` binds (its position's account, twice).
  return createdEventsStatements(events.map((event) => (event.args ?? []).slice(0, -2)));
}

/**
 * The created events of an import's rows: those of `submissions` that `newRows` (an SQL
 * condition) selects, in the order they were inserted. Runs after the rows are inserted, in the
 * same batch; each event's id is made by SQLite as `newEventId` makes one. The rows are numbered
 * in the account's log past `positionBefore` by their rowids past `rowidBefore` (SQL
 * expressions: the account's newest position and the newest rowid before the import, read
 * before it), which the import's transaction gave one after another. Reading them here from
 * `events` would have SQLite write every row aside before inserting it.
 */
export function importedEvents(newRows: string, rowidBefore: string, positionBefore: string, now: number): SqlStatement {
  const [before, after] = createdEventText(now).split(/evt_[0-9a-f]{32}/) as [string, string];
  return {
    sql: `INSERT INTO events (${EVENT_COLUMNS})
          SELECT account_id, 'submission.created', ?, popup_id, id, status, ? || lower(hex(randomblob(10))) || ?, rowid,
            ${positionBefore} + rowid - ${rowidBefore}
          FROM submissions WHERE ${newRows} ORDER BY rowid`,
    args: [now, before + eventIdStart(now), after],
  };
}

/** The status change event; runs before the UPDATE, and selects nothing when the status is already `status`. */
export function statusChangedEvent(accountId: string, submissionId: string, status: SubmissionStatus, now: number): SqlStatement {
  return {
    sql: `INSERT INTO events (${EVENT_COLUMNS})
          SELECT account_id, 'submission.status_changed', ?, popup_id, id, NULL,
                 ${eventObject("submission.status_changed", "json_object('submissionId', id, 'popupId', popup_id, 'status', ?, 'previousStatus', status)")}, NULL,
                 ${nextPosition("submissions.account_id")}
          FROM submissions WHERE account_id = ? AND id = ? AND status != ?`,
    args: [now, newEventId(now), formatInstant(now), status, accountId, submissionId, status],
  };
}

/** The deletion's tombstone; runs before the DELETE and does nothing when there is no such row. */
export function deletedEvent(accountId: string, submissionId: string, reason: DeletionReason, now: number): SqlStatement {
  return {
    sql: `INSERT INTO events (${EVENT_COLUMNS})
          SELECT account_id, 'submission.deleted', ?, popup_id, id, NULL,
                 ${eventObject("submission.deleted", "json_object('submissionId', id, 'popupId', popup_id, 'reason', ?)")}, NULL,
                 ${nextPosition("submissions.account_id")}
          FROM submissions WHERE account_id = ? AND id = ?`,
    args: [now, newEventId(now), formatInstant(now), reason, accountId, submissionId],
  };
}

// bench/events.ts: a row per event costs the binding more than SQLite's reading it.
/**
 * One page of the log, its horizon and its newest position, from one statement (one snapshot).
 * The page's events come as one text, joined by SQLite in position order (`readEventPage`). A database
 * that limits a text's length (D1: 2 MB) refuses a page too long for one; that page is read
 * again in halves (readInHalves), each half a snapshot of its own: a half that finds its
 * events pruned since the first ends the page there, and the next read from its cursor says
 * it expired.
 */
export function readEventTexts(driver: SqlDriver, accountId: string, query: EventQuery): Promise<EventBytesPage> {
  return readInHalves(query, (part) => readEventPage(driver, accountId, part), {
    rows: (page) => (page.expired ? 0 : page.count),
    after: (part, first) => (first.expired ? part : { ...part, after: first.cursor }),
    join: (first, rest) => {
      if (first.expired || rest.expired) return first;
      return { expired: false, count: first.count + rest.count, json: rest.count === 0 ? first.json : joinBytes(first.json, COMMA, rest.json), cursor: rest.cursor };
    },
  });
}

// bench/events.ts: the aggregate's own ORDER BY sorting the page's texts cost SQLite more than any other part of the page but the created events' data.
/**
 * One page of the log as one text (`readEventTexts`). SQLite promises no order for the rows an
 * aggregate reads from a subquery, and nothing else would notice events joined out of order;
 * the aggregate's own ORDER BY (SQLite 3.44, docs/stores.md) would sort the page's texts once
 * more. So the page is read first joined in the order the aggregate meets its rows, with the
 * events' positions joined alongside in that same order, and each created event's data as
 * stored: when the positions ascend and the text holds no raw line break (a row's data edited
 * by hand), that is the page. Otherwise it is read again, joined by the ORDER BY, with the data
 * re-serialised where it holds a line break (EVENT_JSON).
 */
async function readEventPage(driver: SqlDriver, accountId: string, query: EventQuery): Promise<EventBytesPage> {
  const { page, inOrder } = await readEventPageAs(driver, accountId, query, "as met");
  if (page.expired || (inOrder && !holdsLineBreak(page.json))) return page;
  return (await readEventPageAs(driver, accountId, query, "ordered")).page;
}

/**
 * One statement's page of the log: "as met", EVENT_JSON_AS_STORED joined as the aggregate meets
 * the rows (`inOrder`: their positions ascend); "ordered", EVENT_JSON joined in position order.
 */
async function readEventPageAs(driver: SqlDriver, accountId: string, query: EventQuery, as: "as met" | "ordered"): Promise<{ page: EventBytesPage; inOrder: boolean }> {
  const filters: string[] = [];
  const args: SqlValue[] = [accountId, query.after ?? 0];
  if (query.types !== undefined) {
    filters.push(`AND type IN (${query.types.map(() => "?").join(", ")})`);
    args.push(...query.types);
  }
  if (query.popupId !== undefined) {
    filters.push("AND popup_id = ?");
    args.push(query.popupId);
  }
  const json = as === "as met" ? EVENT_JSON_AS_STORED : EVENT_JSON;
  const joined = as === "as met" ? "CAST(group_concat(json, ',') AS BLOB), group_concat(position)" : "CAST(group_concat(json, ',' ORDER BY position) AS BLOB), NULL";
  const page = `SELECT account_position AS position, ${json} AS json FROM events
    WHERE account_id = ? AND account_position > ? ${filters.join(" ")} ORDER BY account_position LIMIT ?`;
  const [row] = arrayRows(await driver.execute({
    sql: `SELECT (SELECT pruned_through FROM event_horizons WHERE account_id = ?), (SELECT MAX(account_position) FROM events WHERE account_id = ?),
          COUNT(*), MAX(position), ${joined} FROM (${page})`,
    args: [accountId, accountId, ...args, query.limit],
    asArrays: true,
    oneRow: true,
  }));
  const [pruned, newest, rows, last, text, positions] = row!;
  const prunedThrough = Number(pruned ?? 0);
  const head = Math.max(prunedThrough, Number(newest ?? 0));
  // Past the head: a cursor this log never handed out (testEventLog says why).
  if (query.after !== undefined && (query.after < prunedThrough || query.after > head)) return { page: { expired: true }, inOrder: true };
  const count = Number(rows);
  const cursor = count === query.limit ? Number(last) : head;
  return { page: { expired: false, count, json: text === null || text === undefined ? new Uint8Array(0) : bytesOf(text), cursor }, inOrder: as === "ordered" || ascending(positions, count) };
}

/** A page of the log as the SQL store reads it: its text as the UTF-8 bytes SQLite wrote. */
type EventBytesPage = { expired: false; count: number; json: Uint8Array; cursor: number } | { expired: true };

const COMMA = new TextEncoder().encode(",");

/** Whether `joined` (positions joined by commas, or NULL for none) holds `count` positions, each above the one before. */
function ascending(joined: unknown, count: number): boolean {
  if (joined === null || joined === undefined) return count === 0;
  const positions = JSON.parse(`[${String(joined)}]`) as number[];
  if (positions.length !== count) return false;
  for (let i = 1; i < positions.length; i++) if (!(positions[i - 1]! < positions[i]!)) return false;
  return true;
}

export async function readEvents(driver: SqlDriver, accountId: string, query: EventQuery): Promise<EventPage> {
  return parsedEventPage(await readEventTexts(driver, accountId, query));
}

/** Events a prune looks at per batch, oldest first: bounds one write transaction. */
const PRUNE_BATCH = 10_000;

/**
 * Drops the events stamped before `before`, oldest first (by `position`, every account's events
 * in commit order), a batch at a time, recording per account the newest of its positions dropped.
 * Positions follow stamps (one clock per write), so what is older is a prefix of the log: an
 * oldest event that is not older ends the prune. `alongside` are statements (without
 * parameters) that drop what goes with the events at or before each account's newest position
 * pruned (`event_horizons`), run in each batch's transaction once that is recorded.
 */
export async function pruneEvents(driver: SqlDriver, before: number, alongside: readonly string[] = []): Promise<number> {
  const oldest = `SELECT position FROM events ORDER BY position LIMIT ${PRUNE_BATCH}`;
  let total = 0;
  while (await oldestEventIsBefore(driver, before)) {
    const results = await driver.batch(
      [
        {
          sql: `INSERT INTO event_horizons (account_id, pruned_through)
                SELECT account_id, MAX(account_position) FROM events WHERE position IN (${oldest}) AND at < ? GROUP BY account_id
                ON CONFLICT (account_id) DO UPDATE SET pruned_through = MAX(pruned_through, excluded.pruned_through)`,
          args: [before],
        },
        ...alongside.map((sql) => ({ sql })),
        // RETURNING, not rowsAffected: D1 counts the rows of triggers too.
        { sql: `DELETE FROM events WHERE position IN (${oldest}) AND at < ? RETURNING 1 AS pruned`, args: [before] },
      ],
      "write",
    );
    const pruned = results.at(-1)!.rows.length;
    total += pruned;
    // Another process pruned between the read and this batch: it drops the rest.
    if (pruned === 0) break;
  }
  return total;
}

/**
 * Whether the log's oldest event is stamped before `before`: read first, so that a prune with
 * nothing to drop (most runs of the hourly pruner) takes no write lock and does not wait on, or
 * hold up, the writes of the creates. Since what is older is a prefix, an oldest event that is
 * not older means no event is.
 */
async function oldestEventIsBefore(driver: SqlDriver, before: number): Promise<boolean> {
  const { rows } = await driver.execute({ sql: "SELECT at FROM events ORDER BY position LIMIT 1", oneRow: true });
  const at = rows[0]?.at;
  return at !== undefined && at !== null && Number(at) < before;
}
