/**
 * The memory store's change log. The store runs each write to completion within one turn of the
 * event loop (no await between a change and its event), so events are appended in the order
 * changes happen, and a reader, which also runs in one turn, never sees a change without its
 * event or an event appear behind a position it was handed.
 */
import { type ChangeEvent, newEventId } from "../../events.ts";
import { formatInstant } from "../../instant.ts";
import type { EventPage, EventQuery, EventTextPage } from "../../store.ts";
import type { DeletionReason, Submission, SubmissionStatus } from "../../submission.ts";

interface StoredEvent {
  position: number;
  at: number;
  popupId: string;
  submissionId: string;
  type: ChangeEvent["type"];
  /** The whole event as JSON: parsed afresh on every read, so readers get copies. */
  text: string;
}

class AccountLog {
  readonly events: StoredEvent[] = [];
  /** The newest position pruned (0 when none was). */
  prunedThrough = 0;
  /** Created events by submission id, to scrub when the submission is deleted. */
  readonly createdBySubmission = new Map<string, StoredEvent>();
}

export class MemoryEventLog {
  private lastPosition = 0;
  private readonly logs = new Map<string, AccountLog>();

  created(accountId: string, s: Submission, at = Date.now()): void {
    const event = this.append(accountId, at, "submission.created", s, s);
    this.logOf(accountId).createdBySubmission.set(s.submissionId, event);
  }

  statusChanged(accountId: string, s: Submission, previousStatus: SubmissionStatus): void {
    this.append(accountId, Date.now(), "submission.status_changed", s, {
      submissionId: s.submissionId, popupId: s.popupId, status: s.status, previousStatus,
    });
  }

  deleted(accountId: string, s: Submission, reason: DeletionReason): void {
    const log = this.logOf(accountId);
    const created = log.createdBySubmission.get(s.submissionId);
    if (created) {
      const event = JSON.parse(created.text) as ChangeEvent;
      created.text = JSON.stringify({ ...event, data: { submissionId: s.submissionId, popupId: s.popupId } });
      log.createdBySubmission.delete(s.submissionId);
    }
    this.append(accountId, Date.now(), "submission.deleted", s, { submissionId: s.submissionId, popupId: s.popupId, reason });
  }

  read(accountId: string, query: EventQuery): EventPage {
    const page = this.readTexts(accountId, query);
    return page.expired ? page : { ...page, events: page.events.map((text) => JSON.parse(text) as ChangeEvent) };
  }

  readTexts(accountId: string, query: EventQuery): EventTextPage {
    const log = this.logs.get(accountId);
    const after = query.after ?? 0;
    if (!log) return { expired: false, events: [], cursor: after };
    if (query.after !== undefined && query.after < log.prunedThrough) return { expired: true };
    const { events } = log;
    const types = query.types && new Set(query.types);
    const page: string[] = [];
    for (let i = firstAfter(events, after); i < events.length; i++) {
      const event = events[i]!;
      if (types && !types.has(event.type)) continue;
      if (query.popupId !== undefined && event.popupId !== query.popupId) continue;
      page.push(event.text);
      if (page.length === query.limit) return { expired: false, events: page, cursor: event.position };
    }
    return { expired: false, events: page, cursor: Math.max(after, log.prunedThrough, events.at(-1)?.position ?? 0) };
  }

  prune(before: number): number {
    let pruned = 0;
    for (const log of this.logs.values()) {
      let count = 0;
      while (count < log.events.length && log.events[count]!.at < before) count++;
      // Stamps follow positions here (one clock, one process), so what is older is a prefix.
      for (const event of log.events.splice(0, count)) {
        log.prunedThrough = event.position;
        if (log.createdBySubmission.get(event.submissionId) === event) log.createdBySubmission.delete(event.submissionId);
      }
      pruned += count;
    }
    return pruned;
  }

  clear(): void {
    this.logs.clear();
  }

  private append(accountId: string, at: number, type: ChangeEvent["type"], s: Pick<Submission, "popupId" | "submissionId">, data: unknown): StoredEvent {
    const event: StoredEvent = {
      position: ++this.lastPosition,
      at,
      popupId: s.popupId,
      submissionId: s.submissionId,
      type,
      text: JSON.stringify({ id: newEventId(), type, timestamp: formatInstant(at), data }),
    };
    this.logOf(accountId).events.push(event);
    return event;
  }

  private logOf(accountId: string): AccountLog {
    let log = this.logs.get(accountId);
    if (!log) this.logs.set(accountId, (log = new AccountLog()));
    return log;
  }
}

/** The index of the first event after `position` (events are in position order). */
function firstAfter(events: readonly StoredEvent[], position: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (events[mid]!.position <= position) low = mid + 1;
    else high = mid;
  }
  return low;
}
