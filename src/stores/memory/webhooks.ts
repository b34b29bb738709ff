/**
 * The memory store's webhook endpoints and outbox. A delivery is a small record per endpoint and
 * event position; the body is read from the change log when claimed, so the outbox keeps no copy
 * of a submission. Like the rest of the memory store, each method runs in one turn of the event
 * loop, so a claim and a record never interleave.
 */
import type { EventType } from "../../events.ts";
import { formatInstant } from "../../instant.ts";
import { type ClaimedDelivery, type Delivery, type DeliveryStatus, WebhookLimitReached, type WebhookRecord, type WebhookStore } from "../../store.ts";
import type { MemoryEventLog } from "./events.ts";

interface DeliveryState {
  position: number;
  eventId: string;
  eventType: EventType;
  status: DeliveryStatus;
  attempts: number;
  firstAttemptAt: number | null;
  lastAttemptAt: number | null;
  nextAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  leaseOwner: string | null;
  leaseUntil: number;
}

class Endpoint {
  readonly deliveries = new Map<number, DeliveryState>();
  /** Positions of the pending deliveries never attempted, ascending, from `freshHead` on. */
  private fresh: number[] = [];
  private freshHead = 0;
  /** Pending deliveries attempted at least once. */
  readonly retrying = new Set<DeliveryState>();

  /** `place`: the newest position whose event this endpoint has taken into its deliveries or skipped. */
  constructor(
    public record: WebhookRecord,
    public place: number,
  ) {}

  /**
   * The never-attempted deliveries that may go now, in commit order, at most `limit`: from the
   * oldest on, up to the first one leased or not yet due (it holds back those after it).
   */
  freshRun(now: number, limit: number): DeliveryState[] {
    const run: DeliveryState[] = [];
    for (let i = this.freshHead; i < this.fresh.length && run.length < limit; i++) {
      const delivery = this.deliveries.get(this.fresh[i]!)!;
      if (delivery.nextAttemptAt! > now || isLeased(delivery, now)) break;
      run.push(delivery);
    }
    return run;
  }

  add(delivery: DeliveryState): void {
    this.deliveries.set(delivery.position, delivery);
    this.file(delivery);
  }

  /** Puts the delivery where its status and attempts say it waits. */
  file(delivery: DeliveryState): void {
    this.unfile(delivery);
    if (delivery.status !== "pending") return;
    if (delivery.attempts > 0) {
      this.retrying.add(delivery);
      return;
    }
    let low = this.freshHead;
    let high = this.fresh.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.fresh[mid]! < delivery.position) low = mid + 1;
      else high = mid;
    }
    if (this.fresh[low] !== delivery.position) this.fresh.splice(low, 0, delivery.position);
  }

  drop(delivery: DeliveryState): void {
    this.unfile(delivery);
    this.deliveries.delete(delivery.position);
  }

  private unfile(delivery: DeliveryState): void {
    this.retrying.delete(delivery);
    if (this.fresh[this.freshHead] === delivery.position) {
      this.freshHead++;
      // Drop the consumed head once it is most of the array, so the queue does not grow for good.
      if (this.freshHead > 1024 && this.freshHead * 2 > this.fresh.length) {
        this.fresh = this.fresh.slice(this.freshHead);
        this.freshHead = 0;
      }
      return;
    }
    const at = this.fresh.indexOf(delivery.position, this.freshHead);
    if (at !== -1) this.fresh.splice(at, 1);
  }
}

export interface MemoryWebhooks {
  store: WebhookStore;
  /** Drops the deliveries whose events the log pruned. */
  dropPruned(): void;
  clear(): void;
}

const copy = <T>(value: T): T => structuredClone(value);
const isLeased = (delivery: DeliveryState, now: number) => delivery.leaseOwner !== null && delivery.leaseUntil > now;
/** Pending and due at `now` again, taking the lease of an attempt in flight (its outcome is not recorded). */
function again(endpoint: Endpoint, delivery: DeliveryState, now: number): void {
  delivery.status = "pending";
  delivery.nextAttemptAt = now;
  delivery.leaseOwner = null;
  delivery.leaseUntil = 0;
  endpoint.file(delivery);
}
const instantOrNull = (millis: number | null) => (millis === null ? null : formatInstant(millis));

/** `assertOpen` throws once the store is closed. */
export function createMemoryWebhooks(events: MemoryEventLog, assertOpen: () => void): MemoryWebhooks {
  const byAccount = new Map<string, Map<string, Endpoint>>();

  const endpointOf = (accountId: string, webhookId: string): Endpoint | undefined => {
    assertOpen();
    return byAccount.get(accountId)?.get(webhookId);
  };

  const newDelivery = (entry: { position: number; id: string; type: EventType }, now: number): DeliveryState => ({
    position: entry.position, eventId: entry.id, eventType: entry.type, status: "pending", attempts: 0, firstAttemptAt: null,
    lastAttemptAt: null, nextAttemptAt: now, lastStatusCode: null, lastError: null, lastDurationMs: null, leaseOwner: null, leaseUntil: 0,
  });

  /** Takes the endpoint's new matching events into its deliveries, due at `now`. */
  const takeNewEvents = (accountId: string, endpoint: Endpoint, now: number) => {
    for (const entry of events.entries(accountId, endpoint.place, endpoint.record)) endpoint.add(newDelivery(entry, now));
    endpoint.place = events.newestPosition(accountId);
  };

  const store: WebhookStore = {
    async insertWebhook(accountId, webhook, most) {
      assertOpen();
      let endpoints = byAccount.get(accountId);
      if (!endpoints) byAccount.set(accountId, (endpoints = new Map()));
      if (endpoints.has(webhook.webhookId)) throw new Error(`webhook ${webhook.webhookId} already exists`);
      if (most !== undefined && endpoints.size >= most) throw new WebhookLimitReached();
      endpoints.set(webhook.webhookId, new Endpoint(copy(webhook), events.newestPosition(accountId)));
    },
    async getWebhook(accountId, webhookId) {
      const endpoint = endpointOf(accountId, webhookId);
      return endpoint && copy(endpoint.record);
    },
    async listWebhooks(accountId) {
      assertOpen();
      return [...(byAccount.get(accountId)?.values() ?? [])].map((endpoint) => copy(endpoint.record));
    },
    async updateWebhook(accountId, webhookId, change) {
      const endpoint = endpointOf(accountId, webhookId);
      if (!endpoint) return undefined;
      const enabled = endpoint.record.disabledAt !== null && change.disabledAt === null;
      const given = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined));
      endpoint.record = { ...endpoint.record, ...copy(given) };
      // What was committed while it was disabled is never its delivery.
      if (enabled) endpoint.place = events.newestPosition(accountId);
      return copy(endpoint.record);
    },
    async deleteWebhook(accountId, webhookId) {
      assertOpen();
      return byAccount.get(accountId)?.delete(webhookId) ?? false;
    },

    async claimDeliveries({ now, limit, leaseMs, owner }) {
      assertOpen();
      const firsts: [string, Endpoint, DeliveryState][] = [];
      const retries: [string, Endpoint, DeliveryState][] = [];
      for (const [accountId, endpoints] of byAccount) {
        for (const endpoint of endpoints.values()) {
          if (endpoint.record.disabledAt !== null) continue;
          takeNewEvents(accountId, endpoint, now);
          for (const delivery of endpoint.freshRun(now, limit)) firsts.push([accountId, endpoint, delivery]);
          for (const delivery of endpoint.retrying) {
            if (delivery.nextAttemptAt! <= now && !isLeased(delivery, now)) retries.push([accountId, endpoint, delivery]);
          }
        }
      }
      // First attempts before retries: an endpoint that keeps failing must not hold up the others' new events.
      firsts.sort(([, , a], [, , b]) => a.position - b.position);
      retries.sort(([, , a], [, , b]) => a.firstAttemptAt! - b.firstAttemptAt! || a.position - b.position);
      const claimed: ClaimedDelivery[] = [];
      for (const [accountId, endpoint, delivery] of [...firsts, ...retries]) {
        if (claimed.length === limit) break;
        const event = events.textAt(accountId, delivery.position);
        if (event === undefined) {
          endpoint.drop(delivery);
          continue;
        }
        delivery.leaseOwner = owner;
        delivery.leaseUntil = now + leaseMs;
        claimed.push({
          accountId, webhook: copy(endpoint.record), position: delivery.position, event, eventId: delivery.eventId,
          eventType: delivery.eventType, attempts: delivery.attempts, firstAttemptAt: delivery.firstAttemptAt,
        });
      }
      return claimed;
    },
    async recordDeliveryAttempt(attempt) {
      const endpoint = endpointOf(attempt.accountId, attempt.webhookId);
      const delivery = endpoint?.deliveries.get(attempt.position);
      if (!endpoint || !delivery || delivery.leaseOwner !== attempt.owner) return false;
      delivery.leaseOwner = null;
      delivery.attempts++;
      delivery.firstAttemptAt ??= attempt.at;
      delivery.lastAttemptAt = attempt.at;
      delivery.lastDurationMs = attempt.durationMs;
      delivery.lastStatusCode = attempt.statusCode;
      delivery.lastError = attempt.error;
      delivery.status = attempt.status;
      delivery.nextAttemptAt = attempt.status === "pending" ? attempt.nextAttemptAt : null;
      endpoint.file(delivery);
      return true;
    },
    async listDeliveries(accountId, webhookId, query) {
      const endpoint = endpointOf(accountId, webhookId);
      if (!endpoint) return { deliveries: [], cursor: null };
      const matching = [...endpoint.deliveries.values()]
        .filter((d) => (query.after === undefined || d.position < query.after) && (query.status === undefined || d.status === query.status))
        .sort((a, b) => b.position - a.position);
      const page = matching.slice(0, query.limit);
      return { deliveries: page.map(toDelivery), cursor: matching.length > page.length ? page.at(-1)!.position : null };
    },
    async retryDelivery(accountId, webhookId, eventId, now) {
      const endpoint = endpointOf(accountId, webhookId);
      const delivery = endpoint && [...endpoint.deliveries.values()].find((d) => d.eventId === eventId);
      if (!delivery) return false;
      again(endpoint!, delivery, now);
      return true;
    },
    async hasEnabledWebhooks() {
      for (const endpoints of byAccount.values()) {
        for (const endpoint of endpoints.values()) if (endpoint.record.disabledAt === null) return true;
      }
      return false;
    },
    async replayDeliveries(accountId, webhookId, since, now) {
      const endpoint = endpointOf(accountId, webhookId);
      if (!endpoint) return 0;
      if (endpoint.record.disabledAt === null) takeNewEvents(accountId, endpoint, now);
      const entries = events.entries(accountId, events.prunedThrough(accountId), endpoint.record, since);
      for (const entry of entries) {
        const delivery = endpoint.deliveries.get(entry.position);
        if (!delivery) {
          endpoint.add(newDelivery(entry, now));
          continue;
        }
        again(endpoint, delivery, now);
      }
      return entries.length;
    },
  };

  return {
    store,
    dropPruned() {
      for (const [accountId, endpoints] of byAccount) {
        const pruned = events.prunedThrough(accountId);
        for (const endpoint of endpoints.values()) {
          for (const delivery of endpoint.deliveries.values()) if (delivery.position <= pruned) endpoint.drop(delivery);
        }
      }
    },
    clear() {
      byAccount.clear();
    },
  };
}

function toDelivery(state: DeliveryState): Delivery {
  return {
    eventId: state.eventId,
    eventType: state.eventType,
    position: state.position,
    status: state.status,
    attempts: state.attempts,
    lastAttemptAt: instantOrNull(state.lastAttemptAt),
    nextAttemptAt: state.status === "pending" ? instantOrNull(state.nextAttemptAt) : null,
    lastStatusCode: state.lastStatusCode,
    lastError: state.lastError,
    lastDurationMs: state.lastDurationMs,
  };
}
