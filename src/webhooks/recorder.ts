/**
 * Records the dispatcher's attempts several to a write: each write is a transaction, and on a
 * file database a transaction per delivery would bound deliveries per second. An outcome is held
 * while other attempts are under way (the next of an endpoint's run starts as this one ends) and
 * written with theirs once none is, once a batch is full, or after a short wait at the latest.
 * A write in flight does not gather outcomes by itself: a store may write synchronously, or be
 * done before the next outcome comes.
 */
import { type DeliveryAttempt, recordDeliveryAttempts, type WebhookStore } from "../store.ts";

const BATCH = 64;
const LONGEST_WAIT_MS = 50;

/** `attemptsUnderWay`: how many attempts are being made now, whose outcomes will come soon. */
export function createAttemptRecorder(store: WebhookStore, attemptsUnderWay: () => number): (attempt: DeliveryAttempt) => Promise<boolean> {
  let waiting: { attempt: DeliveryAttempt; resolve: (recorded: boolean) => void; reject: (error: unknown) => void }[] = [];
  let writing = false;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const due = () => waiting.length >= BATCH || attemptsUnderWay() === 0;

  const write = async () => {
    clearTimeout(deadline);
    deadline = undefined;
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        const recorded = await recordDeliveryAttempts(store, batch.map((entry) => entry.attempt));
        batch.forEach((entry, i) => entry.resolve(recorded[i]!));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
      if (!due()) break;
    }
    writing = false;
    if (waiting.length > 0) deadline ??= setTimeout(writeIfWaiting, LONGEST_WAIT_MS);
  };
  const writeIfWaiting = () => {
    deadline = undefined;
    if (!writing && waiting.length > 0) void write();
  };

  return (attempt) =>
    new Promise<boolean>((resolve, reject) => {
      waiting.push({ attempt, resolve, reject });
      if (writing) return;
      // A microtask later the endpoint's next attempt, if any, has started: then this one waits for it.
      queueMicrotask(() => {
        if (writing || waiting.length === 0) return;
        if (due()) void write();
        else deadline ??= setTimeout(writeIfWaiting, LONGEST_WAIT_MS);
      });
    });
}
