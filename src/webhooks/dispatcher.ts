/**
 * The webhook dispatcher: claims due deliveries from the store's outbox, signs each (Standard
 * Webhooks), posts it through the transport, and records the outcome with its next attempt.
 * `formsink serve` runs one in-process; the Workers adapter runs `runOnce` from its scheduled
 * handler and after each change; a library user runs one beside the handler (docs/webhooks.md).
 *
 * At least once: a delivery leaves the outbox only when an attempt's outcome is recorded, so a
 * crash at any moment leaves it to be claimed again once its lease runs out. One endpoint's
 * first attempts start in the order claimed (commit order), a few at once (`endpointConcurrency`:
 * a delivery starts only once every one that many before it has ended), and their outcomes are
 * written in that order, whatever order they end in; retries, and every attempt to an endpoint
 * whose latest attempt failed, go one after another (retries in order of first attempt).
 * Different endpoints' go out side by side. Outcomes are written with the next claim, in its
 * write (`recordAndClaimDeliveries`), so that under a stream of changes a cycle of claim, sends
 * and outcomes is one write transaction, not two.
 */
import { formatInstant } from "../instant.ts";
import {
  ClaimAfterRecordingFailed, type ClaimedDelivery, type DeliveryAttempt, type DeliveryClaim, type DeliveryStatus, recordAndClaimDeliveries, recordDeliveryAttempts,
  type WebhookStore,
} from "../store.ts";
import { ATTEMPT_TIMEOUT_MS, DISABLE_AFTER_FAILING_MS, retryAt } from "./schedule.ts";
import { signingSecrets, signWebhook } from "./signing.ts";
import { attemptError, type WebhookTransport } from "./transport.ts";

export interface WebhookDispatcherOptions {
  /** How requests go out; `createWebhookTransport` (formsink/node, formsink/bun, formsink/deno) on those runtimes, `createFetchWebhookTransport` on Workers. */
  transport: WebhookTransport;
  /** Epoch milliseconds now; default `Date.now`. */
  clock?: () => number;
  /** In [0, 1), for the retries' jitter; default `Math.random`. */
  random?: () => number;
  /** Deliveries claimed and not yet attempted at once; different endpoints' are sent side by side. Default 32. */
  concurrency?: number;
  /**
   * Of one endpoint, how many first attempts may be under way at once, started in commit order
   * (one starts once every one this many before it has ended); retries, and every attempt while
   * the endpoint's latest attempt failed, go one at a time. Default 4; 1 sends one after another.
   */
  endpointConcurrency?: number;
  /** How long a claimed delivery stays this dispatcher's before another may take it; default 60 s. */
  leaseMs?: number;
  /** How often `start` looks for due deliveries when nothing wakes it; default DEFAULT_POLL_INTERVAL_MS. */
  pollIntervalMs?: number;
  /** This dispatcher's name on its leases; default a random one. */
  owner?: string;
  /** Told of a failed run (a store error); the next run tries again. */
  onError?: (error: unknown) => void;
  /** Told of every attempt's outcome, for logs and metrics. */
  onAttempt?: (report: AttemptReport) => void;
}

export interface AttemptReport {
  accountId: string;
  webhookId: string;
  eventId: string;
  /** What the delivery is now. */
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** This attempt's number, from 1. */
  attempt: number;
  /** Set when this attempt disabled the endpoint. */
  disabled?: "gone" | "failing";
}

export interface WebhookDispatcher {
  /** Sends what is due now, and what comes due while it runs, until nothing is; resolves to how many attempts it made. */
  runOnce(): Promise<number>;
  /** Runs now, then whenever woken, a retry comes due, or the poll interval passes, until `stop`. */
  start(): void;
  /** Stops claiming; resolves once the attempts in flight are recorded. */
  stop(): Promise<void>;
  /** Runs again soon: call it after a change (the handler's `onChange` does). */
  wake(): void;
}

/** The part of a lease an attempt may not start in: it would outlive the lease. */
const LEASE_MARGIN_MS = ATTEMPT_TIMEOUT_MS + 5_000;
/** The shortest lease that leaves room for an attempt. */
export const MIN_LEASE_MS = LEASE_MARGIN_MS + 1_000;
export const DEFAULT_LEASE_MS = 60_000;
/**
 * Of one endpoint, first attempts under way at once: one after another, an endpoint's rate is
 * one round trip at a time, which on a loaded machine fell behind a stream of creates to two
 * endpoints (bench/webhooks.ts). More at once is more disorder for the receiver to see.
 */
export const DEFAULT_ENDPOINT_CONCURRENCY = 4;

/** How often a started dispatcher looks when nothing wakes it: for what other processes committed. */
export const DEFAULT_POLL_INTERVAL_MS = 5_000;

/**
 * How long a wake waits once the dispatcher has caught up, and a claim after one that found
 * less than it could take (with the outcomes it writes): the changes committed meanwhile are
 * claimed, sent and recorded together. A claim and its write of outcomes cost about as much for
 * one delivery as for many, so under a stream of changes this keeps their cost per delivery
 * low, for a delay no receiver notices.
 */
const GATHER_MS = 10;
/**
 * While an endpoint's run is long (a slow receiver), how often a run looks for other endpoints'
 * changes and due retries; otherwise it claims again once an endpoint's run is recorded.
 */
const LONG_RUN_LOOK_MS = 1_000;
/**
 * Outcomes are held while other attempts are under way (the next of an endpoint's run starts as
 * one ends), and written once none is (with the next claim), or after LONGEST_OUTCOME_WAIT_MS at
 * the latest: on a file database a write per outcome would bound deliveries per second. No count
 * of outcomes makes them due sooner: they are at most a claim's (`concurrency`), and a write in
 * the middle of a claim's run, with attempts under way, splits a cycle in two writes (commits
 * the creates wait for), and on `formsink serve`'s thread holds up the answers in flight while
 * it waits for the write lock, so that deliveries fell behind a stream of creates
 * (bench/webhooks.ts).
 */
const LONGEST_OUTCOME_WAIT_MS = 50;

/**
 * How long after its claim a delivery's signature still goes out with it. A claim's deliveries
 * are signed together as it is taken, not each as it is sent: between sends the signing runs
 * with caches the send and the receiver's answer left cold, at several times its CPU
 * (bench/webhooks.ts). An attempt that starts later than this (behind a slow receiver, or a
 * retry's turn) is signed again, so that its timestamp says when it was sent, within this.
 */
const SIGNATURE_REUSE_MS = 5_000;

/** A delivery's `webhook-signature` and the timestamp it signs, made at `at`. */
interface Signed {
  at: number;
  signature: Promise<{ timestamp: number; value: string }>;
}

/**
 * Of one endpoint, the deliveries claimed and not yet handed back to their run, in the order
 * claimed: the first `started` of them are under way or ended (an ended one waits for those
 * before it, so that outcomes are written in the order claimed: an endpoint's place in the log
 * moves on only past a run of recorded first attempts), the rest wait for room.
 */
interface Lane {
  entries: LaneEntry[];
  started: number;
  /** Resolves once the latest attempt started went to the transport. */
  handedOff: Promise<void>;
}

interface LaneEntry {
  delivery: ClaimedDelivery;
  leaseEnds: number;
  signed: Signed;
  ended: boolean;
  /** The attempt made; undefined when it was not (or threw). */
  made: DeliveryAttempt | undefined;
  /** Hands the ended attempt back to the run that claimed it. */
  release: (made: DeliveryAttempt | undefined) => void;
}

/** An attempt made, waiting to be written; `noted` as `afterRecorded` takes it. */
interface Outcome {
  delivery: ClaimedDelivery;
  made: DeliveryAttempt;
  noted: Set<string>;
}

export function createWebhookDispatcher(store: WebhookStore, options: WebhookDispatcherOptions): WebhookDispatcher {
  const {
    transport, clock = Date.now, random = Math.random, concurrency = 32, endpointConcurrency = DEFAULT_ENDPOINT_CONCURRENCY, leaseMs = DEFAULT_LEASE_MS,
    pollIntervalMs = DEFAULT_POLL_INTERVAL_MS, onError, onAttempt,
  } = options;
  if (!(leaseMs >= MIN_LEASE_MS)) throw new RangeError(`leaseMs must be at least ${MIN_LEASE_MS} (got ${leaseMs})`);
  if (!(concurrency >= 1)) throw new RangeError(`concurrency must be at least 1 (got ${concurrency})`);
  if (!(endpointConcurrency >= 1)) throw new RangeError(`endpointConcurrency must be at least 1 (got ${endpointConcurrency})`);
  const owner = options.owner ?? `dispatcher_${crypto.randomUUID()}`;
  /** Per endpoint with deliveries claimed and not yet handed back, their order and progress. */
  const lanes = new Map<string, Lane>();
  /**
   * Per endpoint this dispatcher has attempted, whether its latest attempt failed (then its
   * attempts go one at a time until one succeeds). Before any, the endpoint's `failingSince`
   * as claimed says it: that one can be a cycle late, as outcomes are written with the claim.
   */
  const failing = new Map<string, boolean>();
  let stopping = false;
  /** The earliest retry this dispatcher scheduled that has not come due yet. */
  let earliestRetry = Infinity;

  /** Signs the delivery as of `at`; a failure to sign is the attempt's, once it awaits it. */
  const sign = (delivery: ClaimedDelivery, at: number): Signed => {
    const timestamp = Math.floor(at / 1000);
    const signature = signWebhook(signingSecrets(delivery.webhook, at), delivery.eventId, timestamp, delivery.event, transport.hmacSha256)
      .then((value) => ({ timestamp, value }));
    // Awaited by the attempt, which may not be made (a lease too short): not an unhandled rejection then.
    signature.catch(() => {});
    return { at, signature };
  };

  /**
   * Makes one attempt; undefined when it was not made (the lease would not outlast it). The
   * request goes to the transport once `turn` resolves (the endpoint's attempt started before
   * this one went), and `handedOff` tells the next: signing (WebCrypto's is a job of its own)
   * can end in another order than it began.
   */
  const attempt = async (delivery: ClaimedDelivery, leaseEnds: number, signed: Signed, turn: Promise<void>, handedOff: () => void): Promise<DeliveryAttempt | undefined> => {
    const at = clock();
    if (at + LEASE_MARGIN_MS > leaseEnds) {
      handedOff();
      return undefined;
    }
    const { webhook, eventId } = delivery;
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const { timestamp, value: signature } = await (at - signed.at <= SIGNATURE_REUSE_MS ? signed : sign(delivery, at)).signature;
      await turn;
      const answer = transport({
        url: webhook.url,
        headers: {
          "content-type": "application/json",
          "user-agent": "formsink-webhooks",
          "webhook-id": eventId,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature,
        },
        body: delivery.event,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
      });
      handedOff();
      const response = await answer;
      statusCode = response.status;
      if (statusCode < 200 || statusCode > 299) error = answerError(statusCode);
    } catch (thrown) {
      error = attemptError(thrown, ATTEMPT_TIMEOUT_MS);
    } finally {
      handedOff();
    }
    const durationMs = Math.round(performance.now() - started);
    const next = error === null || statusCode === 410 ? null : retryAt(delivery.attempts + 1, delivery.firstAttemptAt ?? at, at, random());
    const status: DeliveryStatus = error === null ? "succeeded" : next === null ? "failed" : "pending";
    return { accountId: delivery.accountId, webhookId: webhook.webhookId, position: delivery.position, owner, at, durationMs, statusCode, error, status, nextAttemptAt: next };
  };

  /** Starts the endpoint's waiting deliveries, in the order claimed, while it has room. */
  const startWhatFits = (key: string, lane: Lane) => {
    while (lane.started < lane.entries.length) {
      const entry = lane.entries[lane.started]!;
      // One at a time while failing: a receiver that comes back gets them in first-attempt order.
      const probe = failing.get(key) ?? entry.delivery.webhook.failingSince !== null;
      const width = probe || entry.delivery.attempts > 0 ? 1 : endpointConcurrency;
      if (lane.started >= width) return;
      lane.started++;
      const turn = lane.handedOff;
      let handedOff = () => {};
      lane.handedOff = new Promise<void>((resolve) => (handedOff = resolve));
      attempt(entry.delivery, entry.leaseEnds, entry.signed, turn, handedOff)
        .then((made) => {
          entry.made = made;
          if (made === undefined) return;
          if (made.error !== null) failing.set(key, true);
          else if (probe) failing.set(key, false);
        }, (error: unknown) => onError?.(error))
        .finally(() => {
          entry.ended = true;
          while (lane.entries[0]?.ended) {
            const done = lane.entries.shift()!;
            lane.started--;
            done.release(done.made);
          }
          if (lane.entries.length === 0) lanes.delete(key);
          else startWhatFits(key, lane);
        });
    }
  };

  /** Queues a claimed delivery on its endpoint's lane; `release` gets its attempt once those claimed before it were handed back. */
  const enqueue = (delivery: ClaimedDelivery, leaseEnds: number, signed: Signed, release: LaneEntry["release"]) => {
    const key = endpointKey(delivery);
    let lane = lanes.get(key);
    if (lane === undefined) lanes.set(key, lane = { entries: [], started: 0, handedOff: Promise.resolve() });
    lane.entries.push({ delivery, leaseEnds, signed, ended: false, made: undefined, release });
    startWhatFits(key, lane);
  };

  /**
   * What a recorded attempt means for its endpoint: days of failures or a 410 disable it, a
   * success clears the count. `noted`: the endpoints whose count this claim's deliveries already
   * set or cleared (they share one snapshot of the endpoint), so a run writes it once.
   */
  const afterRecorded = async (delivery: ClaimedDelivery, made: DeliveryAttempt, noted: Set<string>) => {
    const { accountId, webhook } = delivery;
    if (made.nextAttemptAt !== null) earliestRetry = Math.min(earliestRetry, made.nextAttemptAt);
    const note = async (failingSince: number | null) => {
      const key = endpointKey(delivery);
      if (noted.has(key)) return;
      noted.add(key);
      await store.updateWebhook(accountId, webhook.webhookId, { failingSince });
    };
    let disabled: AttemptReport["disabled"];
    if (made.error === null) {
      if (webhook.failingSince !== null) await note(null);
    } else if (made.statusCode === 410) {
      disabled = "gone";
    } else if (webhook.failingSince === null) {
      await note(made.at);
    } else if (made.at - webhook.failingSince >= DISABLE_AFTER_FAILING_MS) {
      disabled = "failing";
    }
    if (disabled) await store.updateWebhook(accountId, webhook.webhookId, { disabledAt: formatInstant(made.at) });
    const { status, statusCode, error, durationMs } = made;
    onAttempt?.({ accountId, webhookId: webhook.webhookId, eventId: delivery.eventId, status, statusCode, error, durationMs, attempt: delivery.attempts + 1, disabled });
  };

  const runOnce = async (): Promise<number> => {
    let made = 0;
    /** Claimed deliveries whose attempt has not ended yet (being made, or waiting for its endpoint's earlier ones). */
    const attempting = new Set<Promise<void>>();
    /** Per endpoint, its claimed deliveries whose attempt has not ended yet. */
    const unattempted = new Map<string, number>();
    /** Attempts made whose outcome is not written yet: the next write takes them all. */
    let outcomes: Outcome[] = [];
    /** When (performance.now()) the oldest of `outcomes` was made. */
    let outcomesSince = 0;
    /** What follows written outcomes (an endpoint's failure count, `onAttempt`). */
    const following = new Set<Promise<void>>();
    /**
     * When (performance.now()) the last claim found fewer than it asked for; undefined when it
     * did not. Nothing more is claimable then before an endpoint's run is all attempted (its
     * next first attempts wait for its outcomes, which a claim writes first), unless another
     * endpoint's changes or retries came meanwhile, which a claim looks for once a second while
     * a run is long (a slow receiver).
     */
    let shortClaimAt: number | undefined;
    /** Whether this run has claimed yet. */
    let claimedBefore = false;
    /** Resolves LONG_RUN_LOOK_MS after that short claim: a run waiting on slow receivers looks then. */
    let lookAgain: Promise<void> | undefined;
    /** An endpoint's claimed deliveries were all attempted since the last claim. */
    let endpointFreed = false;
    /**
     * Wakes the loop's wait: an ended attempt that may change what it does (its endpoint's run
     * or the whole run attempted). Not every ended attempt: a wait on
     * all of them, renewed at each one's end, costs a reaction per attempt under way each time.
     */
    let poke = () => {};

    /**
     * Writes the outcomes made so far and, with `claim`, claims in the same write: one
     * transaction for both, so that under a stream of changes a cycle of the dispatcher is one
     * commit (on SQLite, one hold of the write lock the creates need, and one commit after which
     * the other connections drop their page cache).
     */
    const write = async (claim: DeliveryClaim | undefined): Promise<ClaimedDelivery[]> => {
      const batch = outcomes;
      outcomes = [];
      let recorded: boolean[];
      let claimed: ClaimedDelivery[] = [];
      try {
        if (claim) ({ recorded, claimed } = await recordAndClaimDeliveries(store, batch.map((outcome) => outcome.made), claim));
        else recorded = await recordDeliveryAttempts(store, batch.map((outcome) => outcome.made));
      } catch (error) {
        // The outcomes recorded before the claim failed stand: what follows them depends on them
        // alone. The rest, and what the claim leased, are sent again once their leases run out.
        if (error instanceof ClaimAfterRecordingFailed) follow(batch, error.recorded);
        if (claim) throw error;
        onError?.(error);
        return [];
      }
      follow(batch, recorded);
      return claimed;
    };

    /** Starts what follows each recorded outcome of `batch`. */
    const follow = (batch: readonly Outcome[], recorded: readonly boolean[]) => {
      batch.forEach((outcome, i) => {
        // Not recorded: another dispatcher took the delivery over, and its outcome counts.
        if (!recorded[i]) return;
        const after: Promise<void> = afterRecorded(outcome.delivery, outcome.made, outcome.noted)
          .catch((error: unknown) => onError?.(error))
          .finally(() => following.delete(after));
        following.add(after);
      });
    };

    const send = (claimed: readonly ClaimedDelivery[], leaseEnds: number) => {
      const noted = new Set<string>();
      // Every delivery signed before any is sent (SIGNATURE_REUSE_MS says why).
      const signedAt = clock();
      const signatures = claimed.map((delivery) => sign(delivery, signedAt));
      for (const [i, delivery] of claimed.entries()) {
        const key = endpointKey(delivery);
        unattempted.set(key, (unattempted.get(key) ?? 0) + 1);
        let handedBack = () => {};
        const ended = new Promise<void>((resolve) => (handedBack = resolve));
        attempting.add(ended);
        enqueue(delivery, leaseEnds, signatures[i]!, (outcome) => {
          if (outcome !== undefined) {
            made++;
            if (outcomes.length === 0) outcomesSince = performance.now();
            outcomes.push({ delivery, made: outcome, noted });
          }
          attempting.delete(ended);
          const left = unattempted.get(key)! - 1;
          if (left > 0) unattempted.set(key, left);
          else {
            unattempted.delete(key);
            endpointFreed = true;
            poke();
          }
          handedBack();
        });
      }
    };

    try {
      for (;;) {
        // The outcomes waiting leave room: a claim writes them first, in its own transaction.
        const room = concurrency - attempting.size;
        const sinceShortClaim = shortClaimAt === undefined ? Infinity : performance.now() - shortClaimAt;
        const outcomesDue = outcomes.length > 0 &&
          (stopping || attempting.size === 0 || performance.now() - outcomesSince >= LONGEST_OUTCOME_WAIT_MS);
        // A freed endpoint's next run is claimed with the outcomes, once they are due: while
        // other endpoints' runs are still under way, claiming it at once would split the cycle of
        // every endpoint into one of its own, each a write. After a full claim, the next one goes
        // with a write of outcomes too: a claim for each slot freed would be a write a delivery.
        const worthClaiming = !stopping && room > 0 && (attempting.size === 0 || (endpointFreed && outcomesDue) ||
          (shortClaimAt === undefined ? !claimedBefore || outcomesDue : sinceShortClaim >= LONG_RUN_LOOK_MS));
        // Caught up: the next claim, and the outcomes it writes, wait for the changes committed
        // meanwhile, as a wake gathers them (GATHER_MS).
        const waitingToGather = worthClaiming && (attempting.size > 0 || outcomes.length > 0) && sinceShortClaim < GATHER_MS;
        let claimed: ClaimedDelivery[] = [];
        if (worthClaiming && !waitingToGather) {
          const now = clock();
          if (now >= earliestRetry) earliestRetry = Infinity;
          claimed = await write({ now, limit: room, leaseMs, owner });
          claimedBefore = true;
          shortClaimAt = claimed.length < room ? performance.now() : undefined;
          lookAgain = shortClaimAt === undefined ? undefined : delay(LONG_RUN_LOOK_MS);
          endpointFreed = false;
          send(claimed, now + leaseMs);
        } else if (outcomesDue && !waitingToGather) {
          await write(undefined);
        }
        if (attempting.size === 0 && outcomes.length === 0 && (claimed.length === 0 || stopping)) return made;
        if (claimed.length > 0 && !stopping && attempting.size < concurrency) continue;
        // An ended attempt may free its endpoint (the last of a run frees one) or make the outcomes due.
        const waits: Promise<unknown>[] = [new Promise<void>((resolve) => (poke = resolve))];
        if (waitingToGather) waits.push(delay(GATHER_MS - sinceShortClaim, outcomes.length > 0));
        else {
          if (lookAgain && !stopping) waits.push(lookAgain);
          if (outcomes.length > 0) waits.push(delay(outcomesSince + LONGEST_OUTCOME_WAIT_MS - performance.now(), true));
        }
        await Promise.race(waits);
      }
    } finally {
      await Promise.allSettled(attempting);
      if (outcomes.length > 0) await write(undefined);
      await Promise.allSettled(following);
    }
  };

  let loop: Promise<void> | undefined;
  let woken = false;
  /** Set while a wake gathers the changes after it: a further wake has nothing to add. */
  let gathering = false;
  let interrupt: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      // A waiting dispatcher must not keep a server's process alive once everything else stopped.
      (timer as { unref?: () => void }).unref?.();
      interrupt = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  return {
    runOnce,
    start() {
      if (loop) return;
      stopping = false;
      loop = (async () => {
        let first = true;
        while (!stopping) {
          if (woken && !first) {
            gathering = true;
            await sleep(GATHER_MS);
            gathering = false;
            if (stopping) break;
          }
          first = false;
          woken = false;
          await runOnce().catch((error: unknown) => onError?.(error));
          if (stopping || woken) continue;
          await sleep(Math.max(0, Math.min(pollIntervalMs, earliestRetry - clock())));
        }
      })();
    },
    async stop() {
      stopping = true;
      interrupt?.();
      await loop;
      loop = undefined;
    },
    wake() {
      woken = true;
      if (!gathering) interrupt?.();
    },
  };
}

/**
 * A wait that keeps no process alive, unless `keepAlive`: what it waits beside (attempts, a stop)
 * does, but outcomes waiting to be written are work of its own.
 */
const delay = (ms: number, keepAlive = false) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (!keepAlive) (timer as { unref?: () => void }).unref?.();
  });

const endpointKey = (delivery: ClaimedDelivery) => `${delivery.accountId}\n${delivery.webhook.webhookId}`;

function answerError(status: number): string {
  if (status === 410) return "the receiver answered 410 Gone: the endpoint is disabled";
  if (status >= 300 && status <= 399) return `the receiver answered ${status} (redirects are not followed)`;
  return `the receiver answered ${status}`;
}
