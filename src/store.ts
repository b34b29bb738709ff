import type { ChangeEvent, EventType } from "./events.ts";
import type { DeletionReason, Submission, SubmissionStatus } from "./submission.ts";
import { compareByCodePoint } from "./text-order.ts";

/**
 * What the handler needs of storage: submissions, per account. A store for your own database
 * implements this and passes `testSubmissionStore` (formsink/testing), the executable form of
 * the contract. Some methods are optional fast paths: without them, `walkSubmissionsAsJson`,
 * `listSubmissionsAsJson`, `getSubmissionAsJson` and `listDataKeys` (below) work them out from
 * the required ones.
 *
 * Keys and accounts (`KeyStore`) and rate-limit counters (`RateLimitCounters`) are separate
 * interfaces: a store without keys is mounted with `options.authenticate`. The built-in stores
 * implement all three (`CompleteStore`).
 *
 * Every method takes the account id first: a store never answers across accounts.
 */
export interface SubmissionStore {
  /** Stores a new submission; fails when the account already has its id. */
  insertSubmission(accountId: string, submission: Submission): Promise<void>;
  getSubmission(accountId: string, submissionId: string): Promise<Submission | undefined>;
  /** One page in a total, stable order (`createdAt`, then `submissionId`) plus the filtered total. */
  listSubmissions(accountId: string, query: SubmissionQuery): Promise<SubmissionPage>;
  /**
   * The next page of a walk through every match, in the list order: the submissions after
   * `walk.after`, so a page deep into millions of rows can cost what the first one does
   * (keyset paging). No total. Exports read this way, page by page.
   */
  walkSubmissions(accountId: string, walk: SubmissionWalk): Promise<Submission[]>;
  /**
   * False when the account has no such submission. Setting the current status is a success that
   * changes nothing (and, in a store that is an `EventLog`, appends no event).
   */
  setSubmissionStatus(accountId: string, submissionId: string, status: SubmissionStatus): Promise<boolean>;
  /**
   * Removes the row for good, and any idempotency record that would replay it; false when the
   * account has no such submission. `reason` (default `api`) is what its event says.
   */
  deleteSubmission(accountId: string, submissionId: string, reason?: DeletionReason): Promise<boolean>;
  /**
   * Inserts the submissions whose id the account does not have yet, all or none (one
   * transaction), and returns how many it inserted: importing the same records again changes
   * nothing. Of two with one id in the same call, the first wins. Records are taken as given
   * (ids, times, status): validating them is the caller's job.
   */
  importSubmissions(accountId: string, submissions: readonly Submission[]): Promise<number>;
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
  /** Releases connections and files; the store is unusable afterwards. */
  close(): Promise<void>;

  /**
   * Optional: the page `walkSubmissions` gives, each submission as the JSON text
   * `JSON.stringify` gives it (keys in the order of `Submission`), for a store that can write
   * it cheaper than parsing and re-serialising.
   */
  walkSubmissionsAsJson?(accountId: string, walk: SubmissionWalk): Promise<string[]>;
  /**
   * Optional: the page `walkSubmissionsAsJson` gives as NDJSON bytes (each line UTF-8, ending
   * with `\n`), how many rows it holds and where the last one is: for a store that can hand
   * out the bytes without making a string of each line (an NDJSON export writes them as they are).
   */
  walkSubmissionsAsNdjson?(accountId: string, walk: SubmissionWalk): Promise<NdjsonPage>;
  /**
   * Optional: the page `walkSubmissions` gives, for a CSV export (`CsvPartsPage`): for a store
   * that can hand out a row's fields joined the way a CSV record writes them cheaper than as a
   * Submission.
   */
  walkSubmissionsAsCsvParts?(accountId: string, walk: SubmissionWalk): Promise<CsvPartsPage>;
  /**
   * Optional: the page `listSubmissions` gives, each submission as the JSON text
   * `JSON.stringify` gives it, and where the last one is in the list order: for a store that
   * can write it cheaper than parsing and re-serialising (the list route answers with it).
   */
  listSubmissionsAsJson?(accountId: string, query: SubmissionQuery): Promise<SubmissionTextPage>;
  /**
   * Optional: the submission `getSubmission` gives, as the JSON text `JSON.stringify` gives it:
   * for a store that can write it cheaper than parsing and re-serialising (the get route
   * answers with it).
   */
  getSubmissionAsJson?(accountId: string, submissionId: string): Promise<string | undefined>;
  /**
   * Optional: the top-level `data` keys the matches of `filter` can have, sorted by code
   * point, at most `limit`: every key of every match, and perhaps more (a store may keep a key
   * list per popup that deletes do not shrink). Without it, a CSV export reads every match
   * once more to find its columns.
   */
  listDataKeys?(accountId: string, filter: SubmissionFilter, limit: number): Promise<string[]>;
  /**
   * Optional: resolves once the database has answered a trivial query (`GET /api/health` asks).
   * Without it, the health check reads a submission that cannot exist.
   */
  ping?(): Promise<void>;
  /**
   * Optional: deletes these submissions of the account for good, with their idempotency
   * records, in one transaction, and returns the ids it deleted (an id the account does not
   * have is skipped). `reason` says why, for the change log. Every deletion formsink makes on
   * its own (erasure, retention) goes through here; without it, `deleteSubmission` one by one.
   */
  deleteSubmissions?(accountId: string, submissionIds: readonly string[], reason: DeletionReason): Promise<string[]>;
  /**
   * Optional: the `data` fields this store indexes for erasure (`identifyingFields`, see
   * docs/privacy.md). A store with it also has `findSubmissionsByIdentifier`.
   */
  readonly identifyingFields?: readonly string[];
  /**
   * Optional: the ids of the account's submissions whose `data[field]` is the string `value`
   * (for `email`, equal ignoring ASCII case: see `identifierKey`), from an index kept in the
   * transaction of every write, so the cost does not grow with the account. `field` is one of
   * `identifyingFields`. Without it, erasure walks the whole account (slow at millions).
   */
  findSubmissionsByIdentifier?(accountId: string, field: string, value: string): Promise<string[]>;
}

/**
 * Erasure receipts, retention rules and the key receipts hash values with: what the privacy
 * routes (`/api/erasure`, `/api/retention`) and the retention job keep. Without it those routes
 * answer 501.
 */
export interface PrivacyStore {
  /** Fails when the account already has a receipt with this id. */
  insertErasureReceipt(accountId: string, receipt: ErasureReceipt): Promise<void>;
  getErasureReceipt(accountId: string, erasureId: string): Promise<ErasureReceipt | undefined>;
  /** The account's receipts, oldest first. */
  listErasureReceipts(accountId: string): Promise<ErasureReceipt[]>;
  /** Replaces the account's rules (an empty list removes them). */
  setRetentionRules(accountId: string, rules: readonly RetentionRule[]): Promise<void>;
  getRetentionRules(accountId: string): Promise<RetentionRule[]>;
  /** Every account that has rules, with them: what the retention job works through. */
  listRetentionRules(): Promise<{ accountId: string; rules: RetentionRule[] }[]>;
  /**
   * The deployment's secret for hashing erased values: made at random on first use, the same
   * for every later call and every process on this database.
   */
  erasureHashKey(): Promise<string>;
}

/** A record that an erasure happened: never the value erased, only a keyed hash of it. */
export interface ErasureReceipt {
  erasureId: string;
  field: string;
  /** Hex HMAC-SHA256 of the normalised value under the deployment's `erasureHashKey`. */
  valueHash: string;
  matched: number;
  deleted: number;
  submissionIds: string[];
  requestedAt: string;
  completedAt: string;
}

/** Delete the account's submissions older than `olderThanDays` (of one popup, of one status, when given). */
export interface RetentionRule {
  popupId?: string;
  status?: SubmissionStatus;
  olderThanDays: number;
}

/** Accounts and their API keys: what the handler's own key check and `formsink keys` use. */
export interface KeyStore {
  /** The account with this name, created on first use. */
  ensureAccount(name: string): Promise<Account>;
  /** The account with this name, if there is one. */
  findAccount(name: string): Promise<Account | undefined>;
  /** Fails when a key with this id exists. */
  insertApiKey(key: ApiKeyRecord): Promise<void>;
  /** The key with this public id (the part after the kind prefix), revoked or not. */
  findApiKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(filter?: { accountName?: string }): Promise<ApiKeyListing[]>;
  /** Marks the key revoked (keeps the first revocation time); undefined when no such key. */
  revokeApiKey(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined>;
}

/** Counters for rate limits shared by every instance on one database (`storeRateLimiter`). */
export interface RateLimitCounters {
  /**
   * Adds one hit to `bucket` for the fixed window [windowStart, windowEnd) (epoch milliseconds)
   * and returns the hits the bucket has in that window, this one included. A later window
   * starts again from 1; a hit stamped with an earlier window than the bucket's current one (a
   * clock behind another instance's) counts into the current one. Ended windows may be dropped.
   * Concurrent hits each get a different count.
   */
  countRateLimitHit(bucket: string, windowStart: number, windowEnd: number): Promise<number>;
}

/**
 * The change log (`GET /api/events`). A store that is one appends exactly one event for every
 * change its `SubmissionStore` methods make, in the same transaction as the change:
 * `submission.created` for every row inserted (insert, import, idempotent insert),
 * `submission.status_changed` when a status actually changes, `submission.deleted` (a
 * tombstone) for every row deleted; from then on that submission's `submission.created` event
 * carries only `{submissionId, popupId}`. `testEventLog` (formsink/testing) is the contract as tests.
 *
 * Positions are whole numbers that grow in commit order: an event never becomes readable at a
 * position at or before one a reader has already been handed. They count each account's events
 * alone: no position, cursor or page an account reads depends on other accounts' writes.
 */
export interface EventLog {
  /** The account's events after `query.after`, oldest first, at most `query.limit`. */
  readEvents(accountId: string, query: EventQuery): Promise<EventPage>;
  /**
   * Drops every event stamped before `before` (epoch milliseconds); returns how many it dropped.
   * In a store that is also a `WebhookStore`, the deliveries of those events go with them.
   */
  pruneEvents(before: number): Promise<number>;
  /**
   * Optional: the page `readEvents` gives, each event as the JSON text `JSON.stringify` gives
   * it, joined by commas, for a store that keeps that text and can hand it out without parsing it.
   */
  readEventsAsJson?(accountId: string, query: EventQuery): Promise<EventTextPage>;
}

export interface EventQuery {
  /** A position from an earlier page; without it, from the oldest event kept. */
  after?: number;
  limit: number;
  /** Only events of these types (all when absent). */
  types?: readonly EventType[];
  popupId?: string;
}

export type EventPage =
  /**
   * `cursor`: where the next read starts. The position of the page's last event, or, when
   * the page reached the newest event (fewer than `limit`), the newest position of the
   * account's log, so that a filtered reader moves past what it does not read.
   */
  | { expired: false; events: ChangeEvent[]; cursor: number }
  /** Events after `after` were pruned before this reader got them: it must start afresh. */
  | { expired: true };

/**
 * `json`: the page's `count` events as JSON texts, oldest first, joined by commas (a JSON
 * array's inside), as text or as its UTF-8 bytes (which a store reading them from a database
 * may hand on without making a string of them: `eventPageText` reads either).
 */
export type EventTextPage = { expired: false; count: number; json: string | Uint8Array; cursor: number } | { expired: true };

/** A page's `json` (EventTextPage) as text. */
export function eventPageText(page: { json: string | Uint8Array }): string {
  return typeof page.json === "string" ? page.json : new TextDecoder().decode(page.json);
}

/** A page of the events' texts (`readEventsAsJson`) as the events (`readEvents`): one parse of the whole page. */
export function parsedEventPage(page: EventTextPage): EventPage {
  return page.expired ? page : { expired: false, events: JSON.parse(`[${eventPageText(page)}]`) as ChangeEvent[], cursor: page.cursor };
}

/** The events of a page `readEventsAsJson` gives, each as its text. */
export function eventTexts(page: { json: string | Uint8Array }): string[] {
  return (JSON.parse(`[${eventPageText(page)}]`) as unknown[]).map((event) => JSON.stringify(event));
}

/**
 * Webhook endpoints and their outbox (`/api/webhooks`, the dispatcher). The outbox is the change
 * log plus delivery state: a create writes no delivery row (creates cost the same with or
 * without endpoints); `claimDeliveries` takes each enabled endpoint's new events from the log
 * into its deliveries, then leases the due ones. How a store keeps a first attempt until its
 * outcome is its own (the memory and PostgreSQL stores make a row per delivery at the claim, the
 * SQL store leases a range of the endpoint's log and writes the row with the outcome), as long
 * as what these methods answer is the same. `testWebhookStore` (formsink/testing) is the
 * contract as tests. Only a store that is also an `EventLog` can be one.
 */
export interface WebhookStore {
  /**
   * Stores a new endpoint; it is sent the events committed after this call (its place in the
   * log is the account's newest position, taken in the same transaction). Fails when the id
   * is taken. With `most`, throws `WebhookLimitReached` (and stores nothing) when the account
   * has that many endpoints already, counted in the insert's own write: creates at once never
   * take an account past it.
   */
  insertWebhook(accountId: string, webhook: WebhookRecord, most?: number): Promise<void>;
  getWebhook(accountId: string, webhookId: string): Promise<WebhookRecord | undefined>;
  /** The account's endpoints, oldest first. */
  listWebhooks(accountId: string): Promise<WebhookRecord[]>;
  /** Applies the fields given; undefined when the account has no such endpoint. */
  updateWebhook(accountId: string, webhookId: string, change: WebhookChange): Promise<WebhookRecord | undefined>;
  /** Removes the endpoint and its deliveries; false when the account has no such endpoint. */
  deleteWebhook(accountId: string, webhookId: string): Promise<boolean>;

  /**
   * Across every account: first moves each enabled endpoint's new matching events (after its
   * place in the log) into its deliveries as pending, due now; then leases up to `limit` due
   * deliveries (pending, `nextAttemptAt <= now`, no live lease) to `owner` until
   * `now + leaseMs`, and returns them, each with its event as it reads now. Of one endpoint,
   * deliveries never attempted are returned in commit order, and one only when every earlier
   * one was attempted at least once or comes before it in the same answer (so a dispatcher
   * that sends an endpoint's deliveries one after another in the order given sends first
   * attempts in commit order, a run of them per claim); due retries come in order of first
   * attempt. Fewer than `limit` only when no more are claimable. Two callers never hold a
   * lease on one delivery at once. A disabled endpoint is left out: its
   * pending deliveries wait until it is enabled again, and the events committed while it is
   * disabled never become its deliveries (a replay sends them).
   */
  claimDeliveries(claim: DeliveryClaim): Promise<ClaimedDelivery[]>;
  /**
   * Records the outcome of an attempt by the lease's `owner` and releases the lease; false
   * (nothing recorded) when the lease was lost to another owner meanwhile.
   */
  recordDeliveryAttempt(attempt: DeliveryAttempt): Promise<boolean>;
  /**
   * Optional: `recordDeliveryAttempt` for each attempt, in one write (one transaction), each
   * answered as alone. Without it, `recordDeliveryAttempts` (below) records them one by one.
   */
  recordDeliveryAttempts?(attempts: readonly DeliveryAttempt[]): Promise<boolean[]>;
  /**
   * Optional: `recordDeliveryAttempts`, then `claimDeliveries`, in one write (one transaction):
   * the claim sees the outcomes recorded (an endpoint whose run they end has its next first
   * attempts claimable). A dispatcher's cycle is then one commit, not two. Without it,
   * `recordAndClaimDeliveries` (below) makes the two calls. When the attempts are recorded but
   * the claim's deliveries cannot be had (a read after the commit fails), throws
   * `ClaimAfterRecordingFailed` with what was recorded: what follows a recorded outcome (an
   * endpoint's failure count) must not be lost with the claim.
   */
  recordAndClaimDeliveries?(attempts: readonly DeliveryAttempt[], claim: DeliveryClaim): Promise<RecordedAndClaimed>;
  /** The endpoint's deliveries, newest event first, after `query.after` (a position from an earlier page). */
  listDeliveries(accountId: string, webhookId: string, query: DeliveryQuery): Promise<DeliveryPage>;
  /**
   * Makes the endpoint's delivery of this event pending and due at `now` (attempts count on);
   * false when there is no such delivery. An attempt in flight loses its lease: what the user
   * asked for now wins over that attempt's outcome, which is not recorded.
   */
  retryDelivery(accountId: string, webhookId: string, eventId: string, now: number): Promise<boolean>;
  /**
   * Makes every event of the log kept since `since` (epoch milliseconds) that matches the
   * endpoint pending and due at `now` again, adding deliveries for those it never had; returns
   * how many. Like a retry, it takes the lease of an attempt in flight.
   */
  replayDeliveries(accountId: string, webhookId: string, since: number, now: number): Promise<number>;
  /**
   * Optional: whether any account has an enabled endpoint, so that a server with none need not
   * run a dispatcher (`formsink serve` starts its delivery thread only once one is). Without
   * it, a dispatcher is assumed to have work.
   */
  hasEnabledWebhooks?(): Promise<boolean>;
}

/** An endpoint as stored. Its secrets are kept as they are (they sign), shown only on creation and rotation. */
export interface WebhookRecord {
  webhookId: string;
  url: string;
  /** The event types sent; null for every type. */
  types: EventType[] | null;
  /** Only this popup's events; null for every popup. */
  popupId: string | null;
  description: string | null;
  createdAt: string;
  /** When it was disabled (by a user, a 410 answer or days of failures); null while enabled. */
  disabledAt: string | null;
  /** The signing secrets (`whsec_...`), newest first; a second one signs until `previousSecretExpiresAt`. */
  secrets: string[];
  /** Epoch milliseconds after which only the newest secret signs; null with one secret. */
  previousSecretExpiresAt: number | null;
  /**
   * Epoch milliseconds of the first failed attempt since the last success; null while the
   * latest attempt succeeded (or none was made). The dispatcher keeps it, to disable an
   * endpoint after days of nothing but failures.
   */
  failingSince: number | null;
}

export type WebhookChange = Partial<Omit<WebhookRecord, "webhookId" | "createdAt">>;

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface DeliveryClaim {
  /** Epoch milliseconds. */
  now: number;
  limit: number;
  leaseMs: number;
  /** Who holds the leases: one id per dispatcher. */
  owner: string;
}

export interface ClaimedDelivery {
  accountId: string;
  webhook: WebhookRecord;
  /** The event's place in its account's log (`EventLog`'s position). */
  position: number;
  /** The event's JSON text, as `GET /api/events` shows it now: the delivery's body. */
  event: string;
  eventId: string;
  eventType: EventType;
  attempts: number;
  /** Epoch milliseconds of the first attempt; null when this is the first. */
  firstAttemptAt: number | null;
}

export interface DeliveryAttempt {
  accountId: string;
  webhookId: string;
  position: number;
  owner: string;
  /** Epoch milliseconds the attempt started. */
  at: number;
  durationMs: number;
  /** The receiver's status code; null when none came (refused, timed out, blocked). */
  statusCode: number | null;
  /** Why it failed, for the delivery log; null on success. Never a secret. */
  error: string | null;
  /** What the delivery is now. */
  status: DeliveryStatus;
  /** Epoch milliseconds of the next attempt while `pending`; null otherwise. */
  nextAttemptAt: number | null;
}

export interface DeliveryQuery {
  status?: DeliveryStatus;
  after?: number;
  limit: number;
}

export interface Delivery {
  eventId: string;
  eventType: EventType;
  position: number;
  status: DeliveryStatus;
  attempts: number;
  /** ISO instants; null before the first attempt / when none is planned. */
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
}

/** `cursor`: the position to pass as `after` for the next page; null on the last page. */
export interface DeliveryPage {
  deliveries: Delivery[];
  cursor: number | null;
}

/** `store.recordDeliveryAttempts`, or each attempt recorded alone when the store has no such path. */
export async function recordDeliveryAttempts(store: WebhookStore, attempts: readonly DeliveryAttempt[]): Promise<boolean[]> {
  if (store.recordDeliveryAttempts) return store.recordDeliveryAttempts(attempts);
  return Promise.all(attempts.map((attempt) => store.recordDeliveryAttempt(attempt)));
}

/** What `recordAndClaimDeliveries` answers: each attempt as `recordDeliveryAttempts` does, and the claim's deliveries. */
export interface RecordedAndClaimed {
  recorded: boolean[];
  claimed: ClaimedDelivery[];
}

/**
 * Thrown by `recordAndClaimDeliveries` when the attempts were recorded (committed) and the claim
 * after them failed: `recorded` is what its answer would have said of them. Whatever the claim
 * leased is sent again once its leases run out.
 */
export class ClaimAfterRecordingFailed extends Error {
  override name = "ClaimAfterRecordingFailed";
  constructor(readonly recorded: boolean[], cause: unknown) {
    super(`the attempts were recorded, but the claim after them failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * `store.recordAndClaimDeliveries`, or the attempts recorded and then a claim, when the store has
 * no such path; either way `ClaimAfterRecordingFailed` when the claim fails after the record.
 */
export async function recordAndClaimDeliveries(store: WebhookStore, attempts: readonly DeliveryAttempt[], claim: DeliveryClaim): Promise<RecordedAndClaimed> {
  if (attempts.length === 0) return { recorded: [], claimed: await store.claimDeliveries(claim) };
  if (store.recordAndClaimDeliveries) return store.recordAndClaimDeliveries(attempts, claim);
  const recorded = await recordDeliveryAttempts(store, attempts);
  try {
    return { recorded, claimed: await store.claimDeliveries(claim) };
  } catch (error) {
    throw new ClaimAfterRecordingFailed(recorded, error);
  }
}

/** True when the store keeps webhook endpoints and their outbox. */
export function isWebhookStore(store: object): store is WebhookStore {
  return typeof (store as Partial<WebhookStore>).claimDeliveries === "function";
}

/** A store with everything, fast paths included: what the memory, libSQL, D1 and PostgreSQL stores are. */
export type CompleteStore = Required<SubmissionStore> & KeyStore & RateLimitCounters & PrivacyStore & Required<EventLog> & WebhookStore;

/** True when the store keeps accounts and API keys. */
export function isKeyStore(store: object): store is KeyStore {
  return typeof (store as Partial<KeyStore>).findApiKey === "function";
}

/** True when the store keeps erasure receipts and retention rules. */
export function isPrivacyStore(store: object): store is PrivacyStore {
  return typeof (store as Partial<PrivacyStore>).insertErasureReceipt === "function";
}

/** `store.deleteSubmissions`, or `deleteSubmission` for each id when the store has no such path. */
export async function deleteSubmissions(
  store: SubmissionStore,
  accountId: string,
  submissionIds: readonly string[],
  reason: DeletionReason,
): Promise<string[]> {
  if (store.deleteSubmissions) return store.deleteSubmissions(accountId, submissionIds, reason);
  const deleted: string[] = [];
  for (const submissionId of submissionIds) if (await store.deleteSubmission(accountId, submissionId)) deleted.push(submissionId);
  return deleted;
}

/** The identifying fields every built-in store indexes unless told otherwise. */
export const DEFAULT_IDENTIFYING_FIELDS: readonly string[] = ["email"];

/**
 * What an identifying value is compared by: an `email` with ASCII letters lower-cased (as
 * SQLite's `lower()` does, so that every store agrees), any other field as it is. The PostgreSQL
 * store keys every row it writes, and most emails have no capital: a test for one costs less
 * than a replace that finds none.
 */
export function identifierKey(field: string, value: string): string {
  return field === "email" && HAS_CAPITAL.test(value) ? value.replace(CAPITALS, (letters) => letters.toLowerCase()) : value;
}
const HAS_CAPITAL = /[A-Z]/;
const CAPITALS = /[A-Z]+/g;

/** Rows a fallback reads per page when it walks every match itself. */
const FALLBACK_WALK_PAGE = 1000;

/** Every submission of the account that matches `filter`, oldest first, a page at a time. */
async function* everySubmission(store: SubmissionStore, accountId: string, filter: SubmissionFilter): AsyncGenerator<Submission> {
  let after: SubmissionCursor | undefined;
  for (;;) {
    const page = await store.walkSubmissions(accountId, { ...filter, order: "asc", limit: FALLBACK_WALK_PAGE, after });
    yield* page;
    const last = page.at(-1);
    if (page.length < FALLBACK_WALK_PAGE || last === undefined) return;
    after = { createdAt: Date.parse(last.createdAt), submissionId: last.submissionId };
  }
}

/**
 * `store.findSubmissionsByIdentifier`, or for a store without that index, the matches found by
 * walking every submission of the account (any field then works, at the cost of a full read).
 */
export async function findSubmissionsByIdentifier(store: SubmissionStore, accountId: string, field: string, value: string): Promise<string[]> {
  if (store.findSubmissionsByIdentifier) return store.findSubmissionsByIdentifier(accountId, field, value);
  const key = identifierKey(field, value);
  const found: string[] = [];
  for await (const submission of everySubmission(store, accountId, {})) {
    const candidate = submission.data[field];
    if (typeof candidate === "string" && identifierKey(field, candidate) === key) found.push(submission.submissionId);
  }
  return found;
}

/** True when the store keeps the change log. */
export function isEventLog(store: object): store is EventLog {
  return typeof (store as Partial<EventLog>).readEvents === "function";
}

/** `store.walkSubmissionsAsJson`, or the walk's page serialised when the store has no such path. */
export async function walkSubmissionsAsJson(store: SubmissionStore, accountId: string, walk: SubmissionWalk): Promise<string[]> {
  if (store.walkSubmissionsAsJson) return store.walkSubmissionsAsJson(accountId, walk);
  return (await store.walkSubmissions(accountId, walk)).map((submission) => JSON.stringify(submission));
}

/** `store.walkSubmissionsAsNdjson`, or the lines of `walkSubmissionsAsJson` (or its fallback), encoded. */
export async function walkSubmissionsAsNdjson(store: SubmissionStore, accountId: string, walk: SubmissionWalk): Promise<NdjsonPage> {
  if (store.walkSubmissionsAsNdjson) return store.walkSubmissionsAsNdjson(accountId, walk);
  return ndjsonPage(await walkSubmissionsAsJson(store, accountId, walk));
}

/** A walk's page of JSON texts (`walkSubmissionsAsJson`) as an NdjsonPage. */
export function ndjsonPage(lines: readonly string[]): NdjsonPage {
  const last = lines.at(-1);
  return {
    bytes: new TextEncoder().encode(lines.length === 0 ? "" : `${lines.join("\n")}\n`),
    rows: lines.length,
    ...(last === undefined ? {} : { last: placeOf(JSON.parse(last) as Submission) }),
  };
}

/** `store.walkSubmissionsAsCsvParts`, or the walk's page as Submissions. */
export async function walkSubmissionsAsCsvParts(store: SubmissionStore, accountId: string, walk: SubmissionWalk): Promise<CsvPartsPage> {
  if (store.walkSubmissionsAsCsvParts) return store.walkSubmissionsAsCsvParts(accountId, walk);
  return csvPartsPage(await store.walkSubmissions(accountId, walk));
}

/** A walk's page (`walkSubmissions`) as a CsvPartsPage of Submissions. */
export function csvPartsPage(submissions: readonly Submission[]): CsvPartsPage {
  const entries: unknown[] = [];
  for (const submission of submissions) entries.push("", "", "", 0, submission);
  const last = submissions.at(-1);
  return { entries, rows: submissions.length, ...(last === undefined ? {} : { last: placeOf(last) }) };
}

/** `store.listSubmissionsAsJson`, or the page `listSubmissions` gives, serialised. */
export async function listSubmissionsAsJson(store: SubmissionStore, accountId: string, query: SubmissionQuery): Promise<SubmissionTextPage> {
  if (store.listSubmissionsAsJson) return store.listSubmissionsAsJson(accountId, query);
  const { items, total } = await store.listSubmissions(accountId, query);
  const last = items.at(-1);
  return { items: items.map((submission) => JSON.stringify(submission)), total, ...(last === undefined ? {} : { last: placeOf(last) }) };
}

/** `store.getSubmissionAsJson`, or the submission `getSubmission` gives, serialised. */
export async function getSubmissionAsJson(store: SubmissionStore, accountId: string, submissionId: string): Promise<string | undefined> {
  if (store.getSubmissionAsJson) return store.getSubmissionAsJson(accountId, submissionId);
  const submission = await store.getSubmission(accountId, submissionId);
  return submission && JSON.stringify(submission);
}

/** Where a submission is in the list order: what a walk's `after` continues from. */
export function placeOf(submission: Submission): SubmissionCursor {
  return { createdAt: Date.parse(submission.createdAt), submissionId: submission.submissionId };
}

/** `store.readEventsAsJson`, or the page `readEvents` gives, serialised. */
export async function readEventsAsJson(store: EventLog, accountId: string, query: EventQuery): Promise<EventTextPage> {
  if (store.readEventsAsJson) return store.readEventsAsJson(accountId, query);
  const page = await store.readEvents(accountId, query);
  return page.expired ? page : { expired: false, count: page.events.length, json: page.events.map((event) => JSON.stringify(event)).join(","), cursor: page.cursor };
}

/** `store.listDataKeys`, or the keys of every match, found by walking them all. */
export async function listDataKeys(store: SubmissionStore, accountId: string, filter: SubmissionFilter, limit: number): Promise<string[]> {
  if (store.listDataKeys) return store.listDataKeys(accountId, filter, limit);
  const keys = new Set<string>();
  for await (const submission of everySubmission(store, accountId, filter)) for (const key in submission.data) keys.add(key);
  return [...keys].sort(compareByCodePoint).slice(0, limit);
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

/**
 * Every field of a `SubmissionFilter`, one entry each (a field added to the interface fails the
 * typecheck until it is added here): the list route copies these from its query, and a list
 * cursor's fingerprint hashes them in this order (src/list-cursor.ts; another order changes
 * every cursor handed out).
 */
export const SUBMISSION_FILTER_FIELDS = Object.keys({
  popupId: true, domain: true, device: true, status: true, createdAfter: true, createdBefore: true,
} as const satisfies Record<keyof SubmissionFilter, true>) as (keyof SubmissionFilter)[];

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

/** A `SubmissionPage` of JSON texts (`listSubmissionsAsJson`). */
export interface SubmissionTextPage {
  items: string[];
  total: number;
  /** Where the last item is in the list order; absent when there are no items. */
  last?: SubmissionCursor;
}

/** A walk's page as NDJSON (`walkSubmissionsAsNdjson`). */
export interface NdjsonPage {
  /** The rows' lines, UTF-8, each ending with `\n`; empty for no rows. */
  bytes: Uint8Array;
  rows: number;
  /** Where the last row is in the walk's order; absent when there are no rows. */
  last?: SubmissionCursor;
  /**
   * True when `bytes` were never a string in JavaScript (the database's own text, as its driver
   * returns it): an export then reads larger pages, which take no room in V8's young generation.
   */
  fromDatabase?: boolean;
}

/** The entries of a row in a CsvPartsPage. */
export const CSV_PARTS_PER_ROW = 5;

/**
 * A walk's page for a CSV export (`walkSubmissionsAsCsvParts`): one flat list of entries,
 * CSV_PARTS_PER_ROW a row (no object a row: an export reads a million).
 */
export interface CsvPartsPage {
  /**
   * Per row: `${submissionId},${popupId},${domain},` (none of the three holds a comma, a quote or
   * a line break), the `userAgent` (no quote or line break), `${device},${status},`, `createdAt`
   * as epoch milliseconds, and `data`. Or, for any row: "", "", "", a number (not read) and
   * the Submission.
   */
  entries: unknown[];
  rows: number;
  /** Where the last row is in the walk's order; absent when there are no rows. */
  last?: SubmissionCursor;
}

/** What a store keeps about a create made with an Idempotency-Key. */
export interface IdempotencyRecord {
  /** The client's Idempotency-Key header with the name of the API key that sent it (`keyedIdempotencyKey`), unique within an account. */
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

/**
 * Why a store cannot take a request now, through no fault of the request: `"busy"` (another
 * process held the write lock past the store's wait), `"full"` (no space left for the write),
 * `"read-only"` (the database or its directory cannot be written), `"replaced"` (the database
 * file was deleted or replaced while open, so writes would be lost), `"io"` (the disk failed a
 * read or write: a disk quota or file size limit reached, a failing device), `"corrupt"` (the
 * database file is damaged where the request reached it).
 */
export type StoreFaultKind = "busy" | "full" | "read-only" | "replaced" | "io" | "corrupt";

/** Thrown by `insertWebhook` when the account has the most endpoints it may have. */
export class WebhookLimitReached extends Error {
  override name = "WebhookLimitReached";
}

/**
 * Thrown by a store for a storage fault; the handler answers it with its own status and
 * message (503, or 507 for `"full"`) instead of a bare 500, so clients know to retry later and
 * operators know what to fix. The message is shown to clients: it names the fault, never a path.
 */
export class StoreUnavailable extends Error {
  override name = "StoreUnavailable";
  readonly kind: StoreFaultKind;

  constructor(kind: StoreFaultKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}
