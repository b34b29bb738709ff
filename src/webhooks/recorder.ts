/**
 * Records the dispatcher's attempts several to a write: each write is a transaction, and on a
 * file database a transaction per delivery would bound deliveries per second. A store may write
 * synchronously (the libSQL file driver does), so outcomes are held while attempts are still
 * under way and written together once none is (an endpoint's run is done), once a batch is
 * full, or after a short wait at the latest.
 */
import { type DeliveryAttempt, recordDeliveryAttempts, type WebhookStore } from "../store.ts";

const BATCH = 64;
const LONGEST_WAIT_MS = 50;

type Timer = ReturnType<typeof setTimeout>;

/** `attemptsUnderWay`: how many attempts are being made now, whose outcomes will come soon. */
export function createAttemptRecorder(store: WebhookStore, attemptsUnderWay: () => number): (attempt: DeliveryAttempt) => Promise<boolean> {
  let waiting: { attempt: DeliveryAttempt; resolve: (recorded: boolean) => void; reject: (error: unknown) => void }[] = [];
  let writing = false;
  let soon: Timer | undefined;
  let latest: Timer | undefined;
  const due = () => waiting.length >= BATCH || attemptsUnderWay() === 0;

  const write = async () => {
    clearTimeout(soon);
    clearTimeout(latest);
    soon = latest = undefined;
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
    if (waiting.length > 0) schedule();
  };

  /** A look once the attempts that just ended have handed on (a macrotask later), and a deadline. */
  const schedule = () => {
    soon ??= setTimeout(() => {
      soon = undefined;
      if (!writing && waiting.length > 0 && due()) void write();
    }, 0);
    latest ??= setTimeout(() => {
      latest = undefined;
      if (!writing && waiting.length > 0) void write();
    }, LONGEST_WAIT_MS);
  };

  return (attempt) =>
    new Promise<boolean>((resolve, reject) => {
      waiting.push({ attempt, resolve, reject });
      if (writing) return;
      if (waiting.length >= BATCH) void write();
      else schedule();
    });
}
