/**
 * An in-memory store for tests, demos and embedding. Nothing survives the process; lists are
 * computed by scanning the account's submissions (fine for thousands, not for millions).
 */
import { createMemoryRateLimiter } from "../rate-limit/limiter.ts";
import type {
  Account, ApiKeyListing, ApiKeyRecord, IdempotencyRecord, SubmissionFilter, SubmissionPage, SubmissionQuery, SubmissionStore,
  SubmissionWalk,
} from "../store.ts";
import type { Submission, SubmissionStatus } from "../submission.ts";
import { compareByCodePoint, compareSubmissions, isAfter, matchesFilter } from "./query.ts";

interface StoredIdempotency extends IdempotencyRecord {
  submission: Submission;
}

export function createMemoryStore(): SubmissionStore {
  const accountsByName = new Map<string, Account>();
  const submissionsByAccount = new Map<string, Map<string, Submission>>();
  const keys = new Map<string, ApiKeyRecord>();
  /** Per account: Idempotency-Key to the record of the create made with it. */
  const idempotencyByAccount = new Map<string, Map<string, StoredIdempotency>>();
  const rateLimiter = createMemoryRateLimiter();
  let closed = false;

  const submissionsOf = (accountId: string) => {
    if (closed) throw new Error("store is closed");
    let submissions = submissionsByAccount.get(accountId);
    if (!submissions) submissionsByAccount.set(accountId, (submissions = new Map()));
    return submissions;
  };
  const sorted = (accountId: string, filter: SubmissionFilter, order: "asc" | "desc") => {
    const direction = order === "asc" ? 1 : -1;
    return [...submissionsOf(accountId).values()].filter((s) => matchesFilter(s, filter)).sort((a, b) => direction * compareSubmissions(a, b));
  };
  const walkPage = (accountId: string, walk: SubmissionWalk) => {
    const { after, order } = walk;
    return sorted(accountId, walk, order).filter((s) => after === undefined || isAfter(s, after, order)).slice(0, walk.limit);
  };
  // Callers get copies, so editing a returned object never edits the store.
  const copy = <T>(value: T): T => structuredClone(value);

  return {
    async insertSubmission(accountId, submission) {
      const submissions = submissionsOf(accountId);
      if (submissions.has(submission.submissionId)) {
        throw new Error(`submission ${submission.submissionId} already exists`);
      }
      submissions.set(submission.submissionId, copy(submission));
    },
    async getSubmission(accountId, submissionId) {
      const submission = submissionsOf(accountId).get(submissionId);
      return submission && copy(submission);
    },
    async listSubmissions(accountId, query: SubmissionQuery): Promise<SubmissionPage> {
      const matching = sorted(accountId, query, query.order);
      return { items: matching.slice(query.offset, query.offset + query.limit).map(copy), total: matching.length };
    },
    async walkSubmissions(accountId, walk) {
      return walkPage(accountId, walk).map(copy);
    },
    async walkSubmissionsAsJson(accountId, walk) {
      return walkPage(accountId, walk).map((submission) => JSON.stringify(submission));
    },
    async listDataKeys(accountId, filter, limit) {
      const keys = new Set<string>();
      for (const submission of submissionsOf(accountId).values()) {
        if (matchesFilter(submission, filter)) for (const key of Object.keys(submission.data)) keys.add(key);
      }
      return [...keys].sort(compareByCodePoint).slice(0, limit);
    },
    async importSubmissions(accountId, incoming) {
      const submissions = submissionsOf(accountId);
      let inserted = 0;
      for (const submission of incoming) {
        if (submissions.has(submission.submissionId)) continue;
        submissions.set(submission.submissionId, copy(submission));
        inserted++;
      }
      return inserted;
    },
    async setSubmissionStatus(accountId, submissionId, status: SubmissionStatus) {
      const submission = submissionsOf(accountId).get(submissionId);
      if (!submission) return false;
      submission.status = status;
      return true;
    },
    async deleteSubmission(accountId, submissionId) {
      const records = idempotencyByAccount.get(accountId);
      for (const [key, record] of records ?? []) {
        if (record.submission.submissionId === submissionId) records!.delete(key);
      }
      return submissionsOf(accountId).delete(submissionId);
    },
    async insertSubmissionOnce(accountId, submission, idempotency, now) {
      const submissions = submissionsOf(accountId);
      let records = idempotencyByAccount.get(accountId);
      if (!records) idempotencyByAccount.set(accountId, (records = new Map()));
      for (const [key, record] of records) if (record.expiresAt <= now) records.delete(key);
      const taken = records.get(idempotency.key);
      if (taken) return { inserted: false, fingerprint: taken.fingerprint, submission: copy(taken.submission) };
      if (submissions.has(submission.submissionId)) {
        throw new Error(`submission ${submission.submissionId} already exists`);
      }
      submissions.set(submission.submissionId, copy(submission));
      records.set(idempotency.key, { ...idempotency, submission: copy(submission) });
      return { inserted: true };
    },
    async countRateLimitHit(bucket, windowStart, windowEnd) {
      if (closed) throw new Error("store is closed");
      return rateLimiter.countHit(bucket, windowStart, windowEnd);
    },

    async ensureAccount(name) {
      let account = accountsByName.get(name);
      if (!account) {
        account = { id: crypto.randomUUID(), name, createdAt: new Date().toISOString() };
        accountsByName.set(name, account);
      }
      return { ...account };
    },
    async findAccount(name) {
      const account = accountsByName.get(name);
      return account && { ...account };
    },
    async insertApiKey(key) {
      if (keys.has(key.id)) throw new Error(`API key ${key.id} already exists`);
      keys.set(key.id, copy(key));
    },
    async findApiKey(keyId) {
      const key = keys.get(keyId);
      return key && copy(key);
    },
    async listApiKeys(filter = {}): Promise<ApiKeyListing[]> {
      const accountNames = new Map([...accountsByName.values()].map((a) => [a.id, a.name]));
      return [...keys.values()]
        .map(({ hash: _hash, ...key }) => ({ ...copy(key), accountName: accountNames.get(key.accountId) ?? "" }))
        .filter((key) => filter.accountName === undefined || key.accountName === filter.accountName)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    },
    async revokeApiKey(keyId, revokedAt) {
      const key = keys.get(keyId);
      if (!key) return undefined;
      key.revokedAt ??= revokedAt;
      return copy(key);
    },

    async close() {
      closed = true;
      submissionsByAccount.clear();
      idempotencyByAccount.clear();
    },
  };
}
