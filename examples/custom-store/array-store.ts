// A store of your own: the required core of the contract (SubmissionStore) on plain Maps and
// arrays, and nothing else - no API keys (mount it with `authenticate`, see ./server.ts), no
// rate-limit counters, no export fast paths (formsink falls back to walkSubmissions).
// Every list and walk filters and sorts all of an account's rows: right for a few thousand,
// and short enough to read; a real database does the same with an index on (createdAt, id).
import type {
  IdempotencyRecord, Submission, SubmissionFilter, SubmissionStore, SubmissionWalk,
} from "formsink";

interface Account {
  rows: Map<string, Submission>;
  /** By Idempotency-Key: the record and a copy of the submission first stored under it. */
  idempotency: Map<string, IdempotencyRecord & { submission: Submission }>;
}

export function createArrayStore(): SubmissionStore {
  const accounts = new Map<string, Account>();
  let closed = false;

  const accountOf = (accountId: string): Account => {
    if (closed) throw new Error("the store is closed");
    let account = accounts.get(accountId);
    if (account === undefined) accounts.set(accountId, (account = { rows: new Map(), idempotency: new Map() }));
    return account;
  };
  const add = (account: Account, submission: Submission) => {
    if (Number.isNaN(Date.parse(submission.createdAt))) throw new RangeError(`createdAt of ${submission.submissionId} is not a time`);
    account.rows.set(submission.submissionId, structuredClone(submission));
  };
  // Matching rows in the list order: createdAt, then submissionId, both in the query's direction.
  const matching = (account: Account, filter: SubmissionFilter, order: "asc" | "desc"): Submission[] => {
    const direction = order === "asc" ? 1 : -1;
    return [...account.rows.values()].filter((row) => matches(row, filter)).sort((a, b) => direction * compare(a, b));
  };

  return {
    async insertSubmission(accountId, submission) {
      const account = accountOf(accountId);
      if (account.rows.has(submission.submissionId)) throw new Error(`submission ${submission.submissionId} already exists`);
      add(account, submission);
    },
    async getSubmission(accountId, submissionId) {
      const row = accountOf(accountId).rows.get(submissionId);
      return row && structuredClone(row);
    },
    async listSubmissions(accountId, query) {
      const rows = matching(accountOf(accountId), query, query.order);
      return { items: structuredClone(rows.slice(query.offset, query.offset + query.limit)), total: rows.length };
    },
    async walkSubmissions(accountId, walk: SubmissionWalk) {
      let rows = matching(accountOf(accountId), walk, walk.order);
      const after = walk.after;
      if (after !== undefined) {
        const direction = walk.order === "asc" ? 1 : -1;
        rows = rows.filter((row) => direction * compareToCursor(row, after.createdAt, after.submissionId) > 0);
      }
      return structuredClone(rows.slice(0, walk.limit));
    },
    async setSubmissionStatus(accountId, submissionId, status) {
      const row = accountOf(accountId).rows.get(submissionId);
      if (row === undefined) return false;
      row.status = status;
      return true;
    },
    async deleteSubmission(accountId, submissionId) {
      const account = accountOf(accountId);
      if (!account.rows.delete(submissionId)) return false;
      for (const [key, record] of account.idempotency) {
        if (record.submission.submissionId === submissionId) account.idempotency.delete(key);
      }
      return true;
    },
    async importSubmissions(accountId, submissions) {
      const account = accountOf(accountId);
      // Checked before the first change, so that an import is all or nothing.
      const fresh = new Map<string, Submission>();
      for (const submission of submissions) {
        if (Number.isNaN(Date.parse(submission.createdAt))) throw new RangeError(`createdAt of ${submission.submissionId} is not a time`);
        if (!account.rows.has(submission.submissionId) && !fresh.has(submission.submissionId)) fresh.set(submission.submissionId, submission);
      }
      for (const submission of fresh.values()) add(account, submission);
      return fresh.size;
    },
    async insertSubmissionOnce(accountId, submission, idempotency, now) {
      const account = accountOf(accountId);
      for (const [key, record] of account.idempotency) if (record.expiresAt <= now) account.idempotency.delete(key);
      const taken = account.idempotency.get(idempotency.key);
      if (taken) return { inserted: false, fingerprint: taken.fingerprint, submission: structuredClone(taken.submission) };
      if (account.rows.has(submission.submissionId)) throw new Error(`submission ${submission.submissionId} already exists`);
      add(account, submission);
      account.idempotency.set(idempotency.key, { ...idempotency, submission: structuredClone(submission) });
      return { inserted: true };
    },
    async close() {
      closed = true;
      accounts.clear();
    },
  };
}

function matches(row: Submission, filter: SubmissionFilter): boolean {
  const time = Date.parse(row.createdAt);
  return (
    (filter.popupId === undefined || row.popupId === filter.popupId) &&
    (filter.domain === undefined || row.domain === filter.domain) &&
    (filter.device === undefined || row.device === filter.device) &&
    (filter.status === undefined || row.status === filter.status) &&
    (filter.createdAfter === undefined || time > filter.createdAfter) &&
    (filter.createdBefore === undefined || time < filter.createdBefore)
  );
}

function compare(a: Submission, b: Submission): number {
  return compareToCursor(a, Date.parse(b.createdAt), b.submissionId);
}

function compareToCursor(row: Submission, createdAt: number, submissionId: string): number {
  const byTime = Date.parse(row.createdAt) - createdAt;
  if (byTime !== 0) return byTime;
  return row.submissionId < submissionId ? -1 : row.submissionId > submissionId ? 1 : 0;
}
