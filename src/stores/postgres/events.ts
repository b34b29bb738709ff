/**
 * The change log in PostgreSQL: its reads and pruning (writes.ts appends the events). Positions
 * are per account, taken from `event_heads` by a write that locked the account's head row first,
 * so they are dense and grow in commit order.
 */
import { newEventId } from "../../events.ts";
import { formatInstant } from "../../instant.ts";
import type { EventQuery, EventTextPage } from "../../store.ts";
import { rowToJson, type SubmissionRow } from "./rows.ts";

/** A created event's stored text: the event's JSON up to its data, which is read from the row. */
export function createdEventText(now: number): string {
  return `{"id":"${newEventId(now)}","type":"submission.created","timestamp":"${formatInstant(now)}","data":`;
}

/**
 * The columns `eventText` reads, of the events row `e` and the submissions row `s` that
 * EVENT_TEXT_JOIN joins to a created event.
 */
const EVENT_TEXT_COLUMNS = `e.type, e.event, e.created_status, e.submission_id, e.popup_id,
    s.id, s.popup_id AS s_popup_id, s.data, s.domain, s.user_agent, s.device, s.created_at`;
const EVENT_TEXT_JOIN = "LEFT JOIN submissions s ON e.type = 'submission.created' AND s.account_id = e.account_id AND s.id = e.submission_id";

/**
 * One page of the log with the account's head (newest and pruned positions), in one statement,
 * so from one snapshot; a created event's submission read with it. $1 account, $2 after, $3
 * limit, $4 types (JSON array or NULL), $5 popup (or NULL).
 */
const READ_PAGE = `SELECT h.position AS newest, h.pruned_through, e.position, ${EVENT_TEXT_COLUMNS}
  FROM (SELECT $1::text AS account_id) AS a
  LEFT JOIN event_heads h ON h.account_id = a.account_id
  LEFT JOIN LATERAL (
    SELECT * FROM events WHERE account_id = a.account_id AND position > $2::bigint
      AND ($4::text::json IS NULL OR type IN (SELECT json_array_elements_text($4::text::json)))
      AND ($5::text IS NULL OR popup_id = $5::text)
    ORDER BY position LIMIT $3::bigint) AS e ON true
  ${EVENT_TEXT_JOIN}
  ORDER BY e.position`;

/** A row of EVENT_TEXT_COLUMNS. */
export type EventTextRow = {
  type: string;
  event: string;
  created_status: string;
  submission_id: string;
  popup_id: string;
  id: string | null;
  s_popup_id: string;
  data: string;
  domain: string;
  user_agent: string;
  device: string;
  created_at: string;
};

type PageRow = EventTextRow & { newest: string | null; pruned_through: string | null; position: string | null };

export type Query = (text: string, args: readonly unknown[]) => Promise<readonly Record<string, unknown>[]>;

export async function readEventTexts(query: Query, accountId: string, eventQuery: EventQuery): Promise<EventTextPage> {
  const rows = (await query(READ_PAGE, [
    accountId,
    eventQuery.after ?? 0,
    eventQuery.limit,
    eventQuery.types === undefined ? null : JSON.stringify(eventQuery.types),
    eventQuery.popupId ?? null,
  ])) as unknown as PageRow[];
  const first = rows[0]!;
  const prunedThrough = Number(first.pruned_through ?? 0);
  const head = Math.max(prunedThrough, Number(first.newest ?? 0));
  // Past the head: a cursor this log never handed out (testEventLog says why).
  if (eventQuery.after !== undefined && (eventQuery.after < prunedThrough || eventQuery.after > head)) return { expired: true };
  const events = rows.filter((row) => row.position !== null).map(eventText);
  const cursor =
    events.length === eventQuery.limit && events.length > 0
      ? Number(rows.at(-1)!.position)
      : head;
  return { expired: false, count: events.length, json: events.join(","), cursor };
}

/** The event as the API shows it now: a created event with its submission, or its tombstone once deleted. */
export function eventText(row: EventTextRow): string {
  if (row.type !== "submission.created") return row.event;
  const data =
    row.id === null
      ? `{"submissionId":${JSON.stringify(row.submission_id)},"popupId":${JSON.stringify(row.popup_id)}}`
      : rowToJson([row.id, row.s_popup_id, row.data, row.domain, row.user_agent, row.device, row.created_status, row.created_at] satisfies SubmissionRow);
  return `${row.event}${data}}`;
}

/** Events a prune looks at per statement, oldest first: bounds how long it holds the heads it updates. */
const PRUNE_BATCH = 10_000;

/**
 * Drops some of the events stamped before $1: of each account among the oldest such events,
 * every event up to the newest of them (a prefix of its log, even when servers' clocks disagree
 * a little), recording that position as pruned, with the webhook deliveries of those events. Returns how many it dropped; run until 0.
 */
export const PRUNE_EVENTS = `WITH oldest AS (
    SELECT account_id, position FROM events WHERE at < $1::bigint ORDER BY at LIMIT ${PRUNE_BATCH}),
  cut AS (
    SELECT account_id, MAX(position) AS through FROM oldest GROUP BY account_id ORDER BY account_id),
  heads AS (
    UPDATE event_heads h SET pruned_through = GREATEST(h.pruned_through, cut.through) FROM cut WHERE h.account_id = cut.account_id),
  deliveries AS (
    DELETE FROM webhook_deliveries d USING cut, webhooks w
    WHERE w.account_id = cut.account_id AND d.account_id = w.account_id AND d.webhook_id = w.id AND d.position <= cut.through),
  gone AS (
    DELETE FROM events e USING cut WHERE e.account_id = cut.account_id AND e.position <= cut.through RETURNING 1)
  SELECT COUNT(*)::int AS pruned FROM gone`;
