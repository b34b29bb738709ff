/**
 * The change log's events: what every store appends in the same transaction as each change to
 * a submission, and what `GET /api/events` and webhook deliveries carry. The shape is the
 * Standard Webhooks payload form: `{id, type, timestamp, data}`.
 */
import { pooledRandomBytes, toHex } from "./hex.ts";
import type { DeletionReason, Submission, SubmissionStatus } from "./submission.ts";

export const EVENT_TYPES = ["submission.created", "submission.status_changed", "submission.deleted"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface StatusChange {
  submissionId: string;
  popupId: string;
  status: SubmissionStatus;
  previousStatus: SubmissionStatus;
}

/**
 * A deletion's tombstone: never the deleted personal data. A `submission.created` event of a
 * submission deleted since carries this too, without `reason`.
 */
export interface Tombstone {
  submissionId: string;
  popupId: string;
  reason: DeletionReason;
}

export type ChangeEvent =
  | { id: string; type: "submission.created"; timestamp: string; data: Submission | Omit<Tombstone, "reason"> }
  | { id: string; type: "submission.status_changed"; timestamp: string; data: StatusChange }
  | { id: string; type: "submission.deleted"; timestamp: string; data: Tombstone };

/** Events are kept this long by default before the background loop prunes them. */
export const DEFAULT_EVENT_RETENTION_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The instant before which events are pruned, for a retention of `days` at `now`. */
export function pruneBefore(now: number, days: number): number {
  return now - days * DAY_MS;
}

/**
 * A new event id: `evt_` and 32 lower-case hex digits, the first 12 the time `now` (epoch
 * milliseconds), the rest 80 random bits. Time first, so that the ids made one after another
 * sort together: an index by event id (the webhook delivery log's, which a retry finds its
 * delivery by) then takes each new entry beside the last instead of on a page of its own, and
 * a commit of many deliveries writes a few of its pages, not one per delivery.
 */
export function newEventId(now = Date.now()): string {
  return `${eventIdStart(now)}${toHex(pooledRandomBytes(10))}`;
}

/** What every event id made at `now` starts with: `evt_` and the time's 12 hex digits. */
export function eventIdStart(now: number): string {
  const millis = Math.min(Math.max(0, Math.floor(now)), 2 ** 48 - 1);
  return `evt_${millis.toString(16).padStart(12, "0")}`;
}
