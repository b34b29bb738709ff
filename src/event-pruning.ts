/**
 * The background work that keeps the change log to its retention: drops events older than
 * `retentionDays`. `formsink serve` starts it; the Workers adapter runs it from its scheduled
 * handler; a library user who mounts only the handler runs it the same way (docs/events.md).
 */
import { DEFAULT_EVENT_RETENTION_DAYS, pruneBefore } from "./events.ts";
import type { EventLog } from "./store.ts";

export interface EventPrunerOptions {
  /** Events older than this are dropped; default 30. */
  retentionDays?: number;
  /** How often `start` prunes; default hourly. */
  intervalMs?: number;
  /** Epoch milliseconds now; default `Date.now`. */
  clock?: () => number;
  /** Told of a failed run (the next run tries again). */
  onError?: (error: unknown) => void;
}

export interface EventPruner {
  /** Prunes once now; resolves to how many events it dropped. */
  runOnce(): Promise<number>;
  /** Prunes now and then every `intervalMs` until `stop`. */
  start(): void;
  stop(): void;
}

const HOUR_MS = 60 * 60 * 1000;

export function createEventPruner(log: EventLog, options: EventPrunerOptions = {}): EventPruner {
  const { retentionDays = DEFAULT_EVENT_RETENTION_DAYS, intervalMs = HOUR_MS, clock = Date.now, onError } = options;
  if (!(retentionDays > 0)) throw new RangeError(`retentionDays must be more than 0 (got ${retentionDays})`);
  let timer: ReturnType<typeof setInterval> | undefined;
  const runOnce = () => log.pruneEvents(pruneBefore(clock(), retentionDays));
  const runLogged = () => void runOnce().catch((error: unknown) => onError?.(error));
  return {
    runOnce,
    start() {
      if (timer !== undefined) return;
      runLogged();
      timer = setInterval(runLogged, intervalMs);
      // A pending prune must not keep a server's process alive once everything else has stopped.
      (timer as { unref?: () => void }).unref?.();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
