/**
 * The memory store's change log. The store runs each write to completion within one turn of the
 * event loop (no await between a change and its event), so events are appended in the order
 * changes happen, and a reader, which also runs in one turn, never sees a change without its
 * event or an event appear behind a position it was handed.
 */
import type { ChangeEvent, EventType } from "../../events.ts";
import { randomHex } from "../../hex.ts";
import { formatInstant } from "../../instant.ts";
import type { EventPage, EventQuery, EventTextPage } from "../../store.ts";
import type { DeletionReason, SubmissionStatus } from "../../submission.ts";
import { textToSubmission } from "./submission-text.ts";

/** What kind of event a position holds; a created event also says the status it was created with. */
const CREATED_PENDING = 0;
const CREATED_COMPLETED = 1;
const STATUS_CHANGED = 2;
const DELETED = 3;

/**
 * One account's events as columns, one entry per event: no object and no copy of a submission
 * per event (bench/memory.ts: the memory store's bytes per submission). The ids and popup ids
 * are the strings the rows keep; a created event's data is read from the row when the event is
 * read, so a deleted submission leaves none of its data in the log.
 */
class AccountLog {
  /** Positions count this account's events alone: how far a cursor moves says nothing of other accounts. */
  readonly positions: number[] = [];
  readonly times: number[] = [];
  readonly kinds: number[] = [];
  readonly submissionIds: string[] = [];
  readonly popupIds: string[] = [];
  /** A status change's or a deletion's `data` as JSON; "" for created events. */
  readonly details: string[] = [];
  /** The newest position pruned (0 when none was). */
  prunedThrough = 0;
  /** The newest position given (0 when none was). */
  lastPosition = 0;
  /** Event ids are this prefix and the position: unique without a string kept per event, and, random per account, telling nothing of other accounts. */
  readonly idPrefix = randomHex(8);

  get length(): number {
    return this.positions.length;
  }
}

/** Which events an endpoint takes: null for every type, every popup. */
export interface EventFilter {
  types: readonly EventType[] | null;
  popupId: string | null;
}

export interface EventEntry {
  position: number;
  id: string;
  type: EventType;
}

/** The row's JSON text, while the account still has it. */
export type RowText = (accountId: string, submissionId: string) => string | undefined;

export class MemoryEventLog {
  private readonly logs = new Map<string, AccountLog>();

  constructor(private readonly rowText: RowText) {}

  /** `id` and `popupId` are the strings the row keeps. */
  created(accountId: string, id: string, popupId: string, status: SubmissionStatus, at = Date.now()): void {
    this.append(accountId, at, status === "pending" ? CREATED_PENDING : CREATED_COMPLETED, id, popupId, "");
  }

  statusChanged(accountId: string, id: string, popupId: string, status: SubmissionStatus, previousStatus: SubmissionStatus): void {
    this.append(accountId, Date.now(), STATUS_CHANGED, id, popupId, JSON.stringify({ submissionId: id, popupId, status, previousStatus }));
  }

  deleted(accountId: string, id: string, popupId: string, reason: DeletionReason): void {
    this.append(accountId, Date.now(), DELETED, id, popupId, JSON.stringify({ submissionId: id, popupId, reason }));
  }

  read(accountId: string, query: EventQuery): EventPage {
    const page = this.readTextList(accountId, query);
    return page.expired ? page : { ...page, events: page.events.map((text) => JSON.parse(text) as ChangeEvent) };
  }

  readTexts(accountId: string, query: EventQuery): EventTextPage {
    const page = this.readTextList(accountId, query);
    return page.expired ? page : { expired: false, count: page.events.length, json: page.events.join(","), cursor: page.cursor };
  }

  private readTextList(accountId: string, query: EventQuery): { expired: false; events: string[]; cursor: number } | { expired: true } {
    const log = this.logs.get(accountId);
    const after = query.after ?? 0;
    // A cursor past the newest position was not handed out by this log (testEventLog says why).
    const newest = this.newestPosition(accountId);
    if (after > newest) return { expired: true };
    if (!log) return { expired: false, events: [], cursor: after };
    if (query.after !== undefined && query.after < log.prunedThrough) return { expired: true };
    const types = query.types && new Set(query.types);
    const page: string[] = [];
    for (let i = firstAfter(log.positions, after); i < log.length; i++) {
      const kind = log.kinds[i]!;
      if (types && !types.has(TYPES[kind]!)) continue;
      if (query.popupId !== undefined && log.popupIds[i] !== query.popupId) continue;
      page.push(this.eventText(accountId, log, i));
      if (page.length === query.limit) return { expired: false, events: page, cursor: log.positions[i]! };
    }
    return { expired: false, events: page, cursor: newest };
  }

  /** The account's newest position, pruned or not (0 when it has none). */
  newestPosition(accountId: string): number {
    const log = this.logs.get(accountId);
    return log ? Math.max(log.prunedThrough, log.positions.at(-1) ?? 0) : 0;
  }

  /** The newest position pruned from the account's log (0 when none was). */
  prunedThrough(accountId: string): number {
    return this.logs.get(accountId)?.prunedThrough ?? 0;
  }

  /** Where each event after `after` (and stamped at or after `since`) that matches the filter is, with its id and type. */
  entries(accountId: string, after: number, filter: EventFilter, since = -Infinity): EventEntry[] {
    const log = this.logs.get(accountId);
    if (!log) return [];
    const entries: EventEntry[] = [];
    for (let i = firstAfter(log.positions, after); i < log.length; i++) {
      const type = TYPES[log.kinds[i]!]!;
      if (log.times[i]! < since || (filter.types && !filter.types.includes(type))) continue;
      if (filter.popupId !== null && log.popupIds[i] !== filter.popupId) continue;
      entries.push({ position: log.positions[i]!, id: eventId(log, log.positions[i]!), type });
    }
    return entries;
  }

  /** The event at `position` as `readTexts` gives it; undefined once pruned. */
  textAt(accountId: string, position: number): string | undefined {
    const log = this.logs.get(accountId);
    if (!log) return undefined;
    const i = firstAfter(log.positions, position - 1);
    return log.positions[i] === position ? this.eventText(accountId, log, i) : undefined;
  }

  prune(before: number): number {
    let pruned = 0;
    for (const log of this.logs.values()) {
      let count = 0;
      while (count < log.length && log.times[count]! < before) count++;
      if (count === 0) continue;
      // Stamps follow positions here (one clock, one process), so what is older is a prefix.
      log.prunedThrough = log.positions[count - 1]!;
      for (const column of [log.positions, log.times, log.kinds, log.submissionIds, log.popupIds, log.details]) column.splice(0, count);
      pruned += count;
    }
    return pruned;
  }

  clear(): void {
    this.logs.clear();
  }

  private eventText(accountId: string, log: AccountLog, i: number): string {
    const kind = log.kinds[i]!;
    const submissionId = log.submissionIds[i]!;
    let data = log.details[i]!;
    if (kind === CREATED_PENDING || kind === CREATED_COMPLETED) {
      const text = this.rowText(accountId, submissionId);
      if (text === undefined) {
        data = JSON.stringify({ submissionId, popupId: log.popupIds[i] });
      } else {
        const submission = textToSubmission(text);
        submission.status = kind === CREATED_PENDING ? "pending" : "completed";
        data = JSON.stringify(submission);
      }
    }
    return `{"id":"${eventId(log, log.positions[i]!)}","type":"${TYPES[kind]}","timestamp":"${formatInstant(log.times[i]!)}","data":${data}}`;
  }

  private append(accountId: string, at: number, kind: number, id: string, popupId: string, detail: string): void {
    const log = this.logOf(accountId);
    log.positions.push(++log.lastPosition);
    log.times.push(at);
    log.kinds.push(kind);
    log.submissionIds.push(id);
    log.popupIds.push(popupId);
    log.details.push(detail);
  }

  private logOf(accountId: string): AccountLog {
    let log = this.logs.get(accountId);
    if (!log) this.logs.set(accountId, (log = new AccountLog()));
    return log;
  }
}

function eventId(log: AccountLog, position: number): string {
  return `evt_${log.idPrefix}${position.toString(16).padStart(16, "0")}`;
}

const TYPES: readonly EventType[] = ["submission.created", "submission.created", "submission.status_changed", "submission.deleted"];

/** The index of the first event after `position` (events are in position order). */
function firstAfter(positions: readonly number[], position: number): number {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (positions[mid]! <= position) low = mid + 1;
    else high = mid;
  }
  return low;
}
