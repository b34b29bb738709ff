/**
 * Retention rules: per account, "delete the submissions (of this popup, of this status) older
 * than n days". A preview counts what each rule would delete now; the job deletes it, in small
 * batches that are each one short write transaction, so creates never wait long behind it.
 */
import { deleteSubmissions, type PrivacyStore, type RetentionRule, type SubmissionFilter, type SubmissionStore } from "../store.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** What a rule selects at `now`: the same filter for the preview's count and the job's deletes. */
export function retentionFilter(rule: RetentionRule, now: number): SubmissionFilter {
  return { popupId: rule.popupId, status: rule.status, createdBefore: now - rule.olderThanDays * DAY_MS };
}

export interface RetentionPreview extends RetentionRule {
  /** Submissions created before this instant match the rule now. */
  olderThan: string;
  /** How many submissions the rule would delete now; a row two rules match counts in both. */
  matched: number;
}

/** How many submissions each rule would delete at `now`; deletes nothing. */
export async function previewRetention(store: SubmissionStore, accountId: string, rules: readonly RetentionRule[], now: number): Promise<RetentionPreview[]> {
  return Promise.all(
    rules.map(async (rule) => {
      const filter = retentionFilter(rule, now);
      const { total } = await store.listSubmissions(accountId, { ...filter, order: "asc", limit: 1, offset: 0 });
      return { ...rule, olderThan: new Date(filter.createdBefore!).toISOString(), matched: total };
    }),
  );
}

export interface RetentionJobOptions {
  /** Epoch milliseconds now; a test passes a fake clock. */
  now?: () => number;
  /** Rows deleted per write transaction. */
  batchSize?: number;
  /** Between batches, so that waiting writes (creates) get the database in between. */
  pauseMs?: number;
  /** Between runs, for `start`. */
  intervalMs?: number;
  /** Told about each run that deleted something, and about failures (the job keeps running). */
  log?: (entry: { type: "retention"; deleted: number } | { type: "error"; error: unknown }) => void;
}

export interface RetentionRun {
  /** Submissions deleted by this run, over every account. */
  deleted: number;
}

export interface RetentionJob {
  /** Applies every account's rules once, now, to the end. */
  runOnce(): Promise<RetentionRun>;
  /** Runs now and then every `intervalMs` until `stop`. */
  start(): void;
  /** Stops the timer; resolves once a run under way has finished. */
  stop(): Promise<void>;
}

export const DEFAULT_RETENTION_BATCH_SIZE = 25;
export const DEFAULT_RETENTION_PAUSE_MS = 20;
export const DEFAULT_RETENTION_INTERVAL_MS = 60 * 60 * 1000;

export function createRetentionJob(store: SubmissionStore & PrivacyStore, options: RetentionJobOptions = {}): RetentionJob {
  const {
    now = Date.now,
    batchSize = DEFAULT_RETENTION_BATCH_SIZE,
    pauseMs = DEFAULT_RETENTION_PAUSE_MS,
    intervalMs = DEFAULT_RETENTION_INTERVAL_MS,
    log,
  } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  const runOnce = async (): Promise<RetentionRun> => {
    const at = now();
    let deleted = 0;
    for (const { accountId, rules } of await store.listRetentionRules()) {
      for (const rule of rules) {
        const filter = retentionFilter(rule, at);
        for (;;) {
          // Always the oldest matches left: what a batch deleted is gone from the next walk.
          const page = await store.walkSubmissions(accountId, { ...filter, order: "asc", limit: batchSize });
          if (page.length === 0) break;
          deleted += (await deleteSubmissions(store, accountId, page.map((s) => s.submissionId), "retention")).length;
          if (page.length < batchSize) break;
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      }
    }
    if (deleted > 0) log?.({ type: "retention", deleted });
    return { deleted };
  };

  const tick = () => {
    running = runOnce()
      .catch((error: unknown) => log?.({ type: "error", error }))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };

  return {
    runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
