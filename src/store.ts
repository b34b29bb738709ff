import type { Submission, SubmissionStatus } from "./submission.ts";

/**
 * The one interface every storage backend implements (memory, libSQL, ...). The handler knows
 * nothing else about storage; `test/stores/conformance.ts` is the executable form of this
 * contract and every store runs it unchanged.
 *
 * Every submission method takes the account id first: a store never answers across accounts.
 */
export interface SubmissionStore {
  /** Stores a new submission. Ids are unique within an account. */
  insertSubmission(accountId: string, submission: Submission): Promise<void>;
  getSubmission(accountId: string, submissionId: string): Promise<Submission | undefined>;
  /** One page in a total, stable order (`createdAt`, then `submissionId`) plus the filtered total. */
  listSubmissions(accountId: string, query: SubmissionQuery): Promise<SubmissionPage>;
  /**
   * The next page of a walk through every match, in the list order: the submissions after
   * `walk.after` (keyset paging, so a page deep into millions of rows costs what the first
   * one does). No total. Exports read this way, page by page.
   */
  walkSubmissions(accountId: string, walk: SubmissionWalk): Promise<Submission[]>;
  /**
   * The same page, each submission as the JSON text `JSON.stringify` gives it (keys in the
   * order of `Submission`): what an NDJSON export writes, without parsing and re-serialising.
   */
  walkSubmissionsAsJson(accountId: string, walk: SubmissionWalk): Promise<string[]>;
  /**
   * The top-level `data` keys the matches of `filter` can have, sorted by code point, at most
   * `limit`: every key of every match, and perhaps more. A store may keep a key list per popup
   * that only `popupId` narrows and deletes do not shrink (the SQL store does: a CSV export
   * then knows its columns without a pass over the rows).
   */
  listDataKeys(accountId: string, filter: SubmissionFilter, limit: number): Promise<string[]>;
  /**
   * Inserts the submissions whose id the account does not have yet, all in one transaction,
   * and returns how many it inserted: importing the same records again changes nothing.
   * Of two with one id in the same call, the first wins. Records are taken as given (ids,
   * times, status): validating them is the caller's job.
   */
  importSubmissions(accountId: string, submissions: readonly Submission[]): Promise<number>;
  /** False when the account has no such submission. Setting the current status is a success. */
  setSubmissionStatus(accountId: string, submissionId: string, status: SubmissionStatus): Promise<boolean>;
  /**
   * Removes the row for good, and any idempotency record that would replay it; false when the
   * account has no such submission.
   */
  deleteSubmission(accountId: string, submissionId: string): Promise<boolean>;
  /**
   * Stores a submission under a client's Idempotency-Key, atomically. When the account already
   * has a live record for `idempotency.key` (one that expires after `now`), nothing is stored
   * and the submission first stored under that key comes back with the record's fingerprint;
   * otherwise the submission and a record of it are stored together. Concurrent calls with one
   * key store exactly one submission. Expired records may be dropped on the way.
   */
  insertSubmissionOnce(
    accountId: string,
    submission: Submission,
    idempotency: IdempotencyRecord,
    now: number,
  ): Promise<IdempotentInsert>;

  /**
   * Adds one hit to `bucket` for the fixed window [windowStart, windowEnd) (epoch milliseconds)
   * and returns the hits the bucket has in that window, this one included. A later window
   * starts again from 1; a hit stamped with an earlier window than the bucket's current one (a
   * clock behind another instance's) counts into the current one. Ended windows may be dropped.
   * Concurrent hits each get a different count.
   */
  countRateLimitHit(bucket: string, windowStart: number, windowEnd: number): Promise<number>;

  /** The account with this name, created on first use. */
  ensureAccount(name: string): Promise<Account>;
  /** The account with this name, if there is one. */
  findAccount(name: string): Promise<Account | undefined>;
  insertApiKey(key: ApiKeyRecord): Promise<void>;
  /** The key with this public id (the part after the kind prefix), revoked or not. */
  findApiKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(filter?: { accountName?: string }): Promise<ApiKeyListing[]>;
  /** Marks the key revoked (keeps the first revocation time); undefined when no such key. */
  revokeApiKey(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined>;

  /**
   * Optional: resolves once the database has answered a trivial query (`GET /api/health` asks).
   * Without it, the health check reads a submission that cannot exist.
   */
  ping?(): Promise<void>;

  /** Releases connections and files; the store is unusable afterwards. */
  close(): Promise<void>;
}

export interface SubmissionFilter {
  popupId?: string;
  domain?: string;
  device?: string;
  status?: SubmissionStatus;
  /** Exclusive lower bound on `createdAt`, in epoch milliseconds (may carry a fraction). */
  createdAfter?: number;
  /** Exclusive upper bound on `createdAt`, in epoch milliseconds (may carry a fraction). */
  createdBefore?: number;
}

export interface SubmissionQuery extends SubmissionFilter {
  order: "asc" | "desc";
  limit: number;
  offset: number;
}

/** A place in the list order: the last submission of the page before. */
export interface SubmissionCursor {
  /** Epoch milliseconds of its `createdAt`. */
  createdAt: number;
  submissionId: string;
}

export interface SubmissionWalk extends SubmissionFilter {
  order: "asc" | "desc";
  limit: number;
  /** Start after this submission; the first page has none. */
  after?: SubmissionCursor;
}

export interface SubmissionPage {
  items: Submission[];
  /** Every submission matching the filter, regardless of limit and offset. */
  total: number;
}

/** What a store keeps about a create made with an Idempotency-Key. */
export interface IdempotencyRecord {
  /** The client's Idempotency-Key header, unique within an account. */
  key: string;
  /** What a retry must repeat to get the first answer: a hash of the request body. */
  fingerprint: string;
  /** Epoch milliseconds from which the key is forgotten and may be used afresh. */
  expiresAt: number;
}

export type IdempotentInsert =
  | { inserted: true }
  /** The key was taken: the submission first stored under it (as it was stored) and its fingerprint. */
  | { inserted: false; fingerprint: string; submission: Submission };

export interface Account {
  id: string;
  name: string;
  createdAt: string;
}

export type ApiKeyKind = "secret" | "publishable";

/** A key as stored: never the key itself, only its SHA-256 hash. */
export interface ApiKeyRecord {
  /** Random public id; the key's readable prefix is `fs_<kind>_<id>`. */
  id: string;
  accountId: string;
  kind: ApiKeyKind;
  /** Hex SHA-256 of the whole key text. */
  hash: string;
  /** Hosts a publishable key may be used from (empty for secret keys). */
  domains: string[];
  createdAt: string;
  revokedAt: string | null;
}

/** What `keys list` shows: everything but the hash. */
export interface ApiKeyListing extends Omit<ApiKeyRecord, "hash"> {
  accountName: string;
}
