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

/** A new event id: `evt_` and 128 random bits in lower-case hex. */
export function newEventId(): string {
  return `evt_${toHex(pooledRandomBytes(16))}`;
}
