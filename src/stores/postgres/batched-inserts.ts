/**
 * Creates of one account, batched: an account's writes run one at a time in the database anyway
 * (each locks the account's head row, writes.ts), so a second call sent while one is in flight
 * would only wait for that lock. Instead, what arrives meanwhile goes in the next call, one
 * statement and one commit for all of it. Each caller's promise settles after that commit: an
 * acknowledged create is as durable as one committed alone.
 *
 * A batch that fails for a reason of its own (a duplicate id) is tried again one row at a time,
 * so that only the row at fault fails; a storage fault fails the whole batch.
 */
import { StoreUnavailable } from "../../store.ts";
import type { Submission } from "../../submission.ts";

/** Most rows per call: bounds one statement's size and a create's wait. */
const MAX_BATCH = 100;

interface Pending {
  submission: Submission;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** `insert(accountId, rows)` inserts all the rows or none (a duplicate id fails the call). */
export function batchedInserts(insert: (accountId: string, rows: readonly Submission[]) => Promise<unknown>): (accountId: string, s: Submission) => Promise<void> {
  const queues = new Map<string, Pending[]>();

  const drain = async (accountId: string, queue: Pending[]) => {
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        await insert(accountId, batch.map((pending) => pending.submission));
        for (const pending of batch) pending.resolve();
      } catch (error) {
        if (batch.length === 1 || error instanceof StoreUnavailable) {
          for (const pending of batch) pending.reject(error);
        } else {
          for (const pending of batch) await insert(accountId, [pending.submission]).then(pending.resolve, pending.reject);
        }
      }
    }
    queues.delete(accountId);
  };

  return (accountId, submission) =>
    new Promise<void>((resolve, reject) => {
      const queue = queues.get(accountId);
      if (queue) {
        queue.push({ submission, resolve, reject });
        return;
      }
      const started: Pending[] = [{ submission, resolve, reject }];
      queues.set(accountId, started);
      void drain(accountId, started);
    });
}
