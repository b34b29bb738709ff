import { randomHex } from "../../hex.ts";
import { createMemoryRateLimiter } from "../../rate-limit/limiter.ts";
import {
  type Account, type ApiKeyListing, type ApiKeyRecord, type CompleteStore, csvPartsPage, DEFAULT_IDENTIFYING_FIELDS, type ErasureReceipt, ndjsonPage, type RetentionRule,
  type SubmissionCursor, type SubmissionPage, type SubmissionQuery, type SubmissionWalk, type WebhookStore,
} from "../../store.ts";
import type { DeletionReason, Submission } from "../../submission.ts";
import { compareByCodePoint } from "../../text-order.ts";
import { AccountRows } from "./account-rows.ts";
import { MemoryEventLog } from "./events.ts";
import { IdempotencyRecords } from "./idempotency.ts";
import { pageOf, plentifulPageOf, spansOf, totalOf, tuplesOf } from "./pages.ts";
import { textToSubmission } from "./submission-text.ts";
import { createMemoryWebhooks } from "./webhooks.ts";

export interface MemoryStoreOptions {
  /** The `data` fields erasure finds submissions by, from an index kept with every write; default `["email"]`. */
  identifyingFields?: readonly string[];
}

export function createMemoryStore(options: MemoryStoreOptions = {}): CompleteStore {
  const identifyingFields = [...new Set(options.identifyingFields ?? DEFAULT_IDENTIFYING_FIELDS)].sort(compareByCodePoint);
  const receiptsByAccount = new Map<string, Map<string, ErasureReceipt>>();
  const rulesByAccount = new Map<string, RetentionRule[]>();
  const erasureHashKey = randomHex(32);
  const accountsByName = new Map<string, Account>();
  const rowsByAccount = new Map<string, AccountRows>();
  const keys = new Map<string, ApiKeyRecord>();
  const idempotencyByAccount = new Map<string, IdempotencyRecords>();
  const rateLimiter = createMemoryRateLimiter();
  const events = new MemoryEventLog((accountId, submissionId) => rowsByAccount.get(accountId)?.textOf(submissionId));
  /** Logs the row just inserted into `slot`, with the strings the rows keep. */
  const logCreated = (accountId: string, rows: AccountRows, slot: number, status: Submission["status"], at = Date.now()) => {
    const names = rows.namesAt(slot);
    events.created(accountId, names.id, names.popupId, status, at);
  };
  let closed = false;

  const open = () => {
    if (closed) throw new Error("store is closed");
  };
  const webhooks = createMemoryWebhooks(events, open);
  /** The account's rows for reading: an account never written to has none (and gets no entry). */
  const rowsOf = (accountId: string): AccountRows | undefined => {
    open();
    return rowsByAccount.get(accountId);
  };
  const writableRowsOf = (accountId: string): AccountRows => {
    open();
    let rows = rowsByAccount.get(accountId);
    if (!rows) rowsByAccount.set(accountId, (rows = new AccountRows(identifyingFields)));
    return rows;
  };
  const idempotencyOf = (accountId: string): IdempotencyRecords => {
    let records = idempotencyByAccount.get(accountId);
    if (!records) idempotencyByAccount.set(accountId, (records = new IdempotencyRecords()));
    return records;
  };
  const walkPage = (accountId: string, walk: SubmissionWalk): string[] => {
    const rows = rowsOf(accountId);
    if (!rows) return [];
    const tuples = tuplesOf(rows, walk);
    const slots =
      plentifulPageOf(rows, walk, walk.order, 0, walk.limit, walk.after, tuples) ??
      pageOf(rows, spansOf(rows, walk, walk.order, walk.after, tuples), walk.order, 0, walk.limit);
    return slots.map((slot) => rows.textAt(slot));
  };
  const listPage = (accountId: string, query: SubmissionQuery): { texts: string[]; total: number; last?: SubmissionCursor } => {
    const rows = rowsOf(accountId);
    if (!rows) return { texts: [], total: 0 };
    const tuples = tuplesOf(rows, query);
    const spans = spansOf(rows, query, query.order, undefined, tuples);
    const total = totalOf(spans);
    const slots = plentifulPageOf(rows, query, query.order, query.offset, query.limit, undefined, tuples) ?? pageOf(rows, spans, query.order, query.offset, query.limit);
    const texts = slots.map((slot) => rows.textAt(slot));
    const lastSlot = slots.at(-1);
    if (lastSlot === undefined) return { texts, total };
    const { time, id } = rows.probeAt(lastSlot, false);
    return { texts, total, last: { createdAt: time, submissionId: id! } };
  };
  const copy = <T>(value: T): T => structuredClone(value);

  /** Removes the row, its idempotency record and its index entries, and logs the tombstone: all in one turn. */
  const deleteOne = (accountId: string, submissionId: string, reason: DeletionReason): boolean => {
    const rows = rowsOf(accountId);
    const names = rows?.keptNames(submissionId);
    if (names === undefined) return false;
    rows!.delete(submissionId);
    idempotencyByAccount.get(accountId)?.forgetSubmission(submissionId);
    events.deleted(accountId, names.id, names.popupId, reason);
    return true;
  };

  return {
    async insertSubmission(accountId, submission) {
      const rows = writableRowsOf(accountId);
      const slot = rows.insert(submission);
      if (slot === undefined) throw new Error(`submission ${submission.submissionId} already exists`);
      logCreated(accountId, rows, slot, submission.status);
    },
    async getSubmission(accountId, submissionId) {
      const text = rowsOf(accountId)?.textOf(submissionId);
      return text === undefined ? undefined : textToSubmission(text);
    },
    async getSubmissionAsJson(accountId, submissionId) {
      return rowsOf(accountId)?.textOf(submissionId);
    },
    async listSubmissions(accountId, query): Promise<SubmissionPage> {
      const { texts, total } = listPage(accountId, query);
      return { items: texts.map(textToSubmission), total };
    },
    async listSubmissionsAsJson(accountId, query) {
      const { texts, total, last } = listPage(accountId, query);
      return { items: texts, total, ...(last === undefined ? {} : { last }) };
    },
    async walkSubmissions(accountId, walk) {
      return walkPage(accountId, walk).map(textToSubmission);
    },
    async walkSubmissionsAsJson(accountId, walk) {
      return walkPage(accountId, walk);
    },
    async walkSubmissionsAsNdjson(accountId, walk) {
      return ndjsonPage(walkPage(accountId, walk));
    },
    async walkSubmissionsAsCsvParts(accountId, walk) {
      return csvPartsPage(walkPage(accountId, walk).map(textToSubmission));
    },
    async listDataKeys(accountId, filter, limit) {
      const keys = rowsOf(accountId)?.dataKeys(filter.popupId) ?? [];
      return [...keys].sort(compareByCodePoint).slice(0, limit);
    },
    async importSubmissions(accountId, incoming) {
      const rows = writableRowsOf(accountId);
      const slots: number[] = [];
      const statuses: Submission["status"][] = [];
      try {
        for (const submission of incoming) {
          const slot = rows.insert(submission);
          if (slot === undefined) continue;
          slots.push(slot);
          statuses.push(submission.status);
        }
      } catch (error) {
        // all or nothing, as one transaction would be
        for (const slot of slots) rows.delete(rows.namesAt(slot).id);
        throw error;
      }
      // one time for the whole call, as one transaction's events would have
      const at = Date.now();
      for (let i = 0; i < slots.length; i++) logCreated(accountId, rows, slots[i]!, statuses[i]!, at);
      return slots.length;
    },
    async setSubmissionStatus(accountId, submissionId, status) {
      const rows = rowsOf(accountId);
      const text = rows?.textOf(submissionId);
      if (text === undefined) return false;
      const before = textToSubmission(text);
      // Setting the current status changes nothing and appends no event.
      if (before.status === status) return true;
      rows!.setStatus(submissionId, status);
      const names = rows!.keptNames(submissionId)!;
      events.statusChanged(accountId, names.id, names.popupId, status, before.status);
      return true;
    },
    async deleteSubmission(accountId, submissionId, reason = "api") {
      return deleteOne(accountId, submissionId, reason);
    },
    async deleteSubmissions(accountId, submissionIds, reason) {
      return submissionIds.filter((submissionId) => deleteOne(accountId, submissionId, reason));
    },
    identifyingFields,
    async findSubmissionsByIdentifier(accountId, field, value) {
      return rowsOf(accountId)?.idsByIdentifier(field, value) ?? [];
    },
    async insertSubmissionOnce(accountId, submission, idempotency, now) {
      const rows = writableRowsOf(accountId);
      const records = idempotencyOf(accountId);
      const taken = records.live(idempotency.key, now);
      if (taken) return { inserted: false, fingerprint: taken.fingerprint, submission: textToSubmission(taken.submissionText) };
      const slot = rows.insert(submission);
      if (slot === undefined) throw new Error(`submission ${submission.submissionId} already exists`);
      records.add(idempotency, submission.submissionId, rows.textAt(slot));
      logCreated(accountId, rows, slot, submission.status);
      return { inserted: true };
    },
    async countRateLimitHit(bucket, windowStart, windowEnd) {
      open();
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

    async readEvents(accountId, query) {
      open();
      return events.read(accountId, query);
    },
    async readEventsAsJson(accountId, query) {
      open();
      return events.readTexts(accountId, query);
    },
    async pruneEvents(before) {
      open();
      const pruned = events.prune(before);
      // Deliveries exist only for events still kept, so with nothing pruned there is nothing to drop.
      if (pruned > 0) webhooks.dropPruned();
      return pruned;
    },
    ...webhooks.store,

    async ping() {
      open();
    },

    async insertErasureReceipt(accountId, receipt) {
      open();
      let receipts = receiptsByAccount.get(accountId);
      if (!receipts) receiptsByAccount.set(accountId, (receipts = new Map()));
      if (receipts.has(receipt.erasureId)) throw new Error(`erasure ${receipt.erasureId} already exists`);
      receipts.set(receipt.erasureId, copy(receipt));
    },
    async getErasureReceipt(accountId, erasureId) {
      open();
      const receipt = receiptsByAccount.get(accountId)?.get(erasureId);
      return receipt && copy(receipt);
    },
    async listErasureReceipts(accountId) {
      open();
      return [...(receiptsByAccount.get(accountId)?.values() ?? [])]
        .map(copy)
        .sort((a, b) => compareByCodePoint(a.requestedAt, b.requestedAt) || compareByCodePoint(a.erasureId, b.erasureId));
    },
    async setRetentionRules(accountId, rules) {
      open();
      if (rules.length === 0) rulesByAccount.delete(accountId);
      else rulesByAccount.set(accountId, copy([...rules]));
    },
    async getRetentionRules(accountId) {
      open();
      return copy(rulesByAccount.get(accountId) ?? []);
    },
    async listRetentionRules() {
      open();
      return [...rulesByAccount].sort(([a], [b]) => compareByCodePoint(a, b)).map(([accountId, rules]) => ({ accountId, rules: copy(rules) }));
    },
    async erasureHashKey() {
      open();
      return erasureHashKey;
    },

    async close() {
      closed = true;
      rowsByAccount.clear();
      receiptsByAccount.clear();
      rulesByAccount.clear();
      idempotencyByAccount.clear();
      events.clear();
      webhooks.clear();
    },
  };
}
