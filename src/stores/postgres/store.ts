/**
 * The store on PostgreSQL, over the `postgres` package. Several formsink servers can share one
 * database: every rule that must hold across them is kept by the database. Each write is one
 * call of a server-side function (writes.ts), every read one statement.
 */
import type postgres from "postgres";
import { randomHex } from "../../hex.ts";
import { type Account, type ApiKeyListing, type CompleteStore, csvPartsPage, identifierKey, ndjsonPage, parsedEventPage, type RetentionRule, type SubmissionQuery } from "../../store.ts";
import type { DeletionReason, Submission } from "../../submission.ts";
import { newEventId } from "../../events.ts";
import { formatInstant } from "../../instant.ts";
import { createdEventText, PRUNE_EVENTS, readEventTexts } from "./events.ts";
import { toApiKey, toErasureReceipt } from "../sql/records.ts";
import { batchedInserts } from "./batched-inserts.ts";
import { lookupRounds } from "./lookup-rounds.ts";
import { storageFault, withinTime } from "./faults.ts";
import { postgresWebhookStore } from "./webhooks.ts";
import { storedDataKeys } from "../stored-data-keys.ts";
import {
  derivedRecords, listStatement, rowToJson, rowToSubmission, SUBMISSION_COLUMNS, submissionRecord, type SubmissionRow, walkStatement,
} from "./rows.ts";

type Sql = postgres.Sql;

export interface PostgresStoreSettings {
  /** Milliseconds a store call may take before it is answered `StoreUnavailable`. */
  timeoutMs: number;
  identifyingFields: readonly string[];
  /** Run when the store is closed. */
  close: () => Promise<void>;
}

export function postgresStore(sql: Sql, settings: PostgresStoreSettings): CompleteStore {
  const { timeoutMs } = settings;
  const lockTimeout = `${Math.max(1, Math.floor(timeoutMs))}ms`;
  const query = (text: string, args: readonly unknown[]) => sql.unsafe(text, args as postgres.ParameterOrJSON<never>[], { prepare: true });
  const records = (submissions: readonly Submission[], now: number) =>
    JSON.stringify(submissions.map((s) => submissionRecord(s, createdEventText(now))));
  const dataKeys = storedDataKeys();
  const insert = async (accountId: string, submissions: readonly Submission[], skipPresent: boolean): Promise<number> => {
    const now = Date.now();
    const derived = derivedRecords(submissions, settings.identifyingFields, (popupId, key) => dataKeys.has(accountId, popupId, key));
    const [row] = await query(
      "SELECT COUNT(*)::int AS inserted FROM formsink_insert($1, $2, $3, $4, $5, $6, $7)",
      [accountId, records(submissions, now), now, derived.dataKeys, derived.identifiers, skipPresent, lockTimeout],
    );
    dataKeys.add(accountId, derived.keys);
    return Number(row!.inserted);
  };
  const deleteRows = async (accountId: string, submissionIds: readonly string[], reason: DeletionReason): Promise<string[]> => {
    const now = Date.now();
    const eventIds = submissionIds.map(() => newEventId(now));
    const gone = await query(
      "SELECT formsink_delete($1, $2, $3, $4, $5, $6, $7) AS id",
      [accountId, JSON.stringify(submissionIds), JSON.stringify(eventIds), reason, now, formatInstant(now), lockTimeout],
    );
    return gone.map((row) => String(row.id));
  };

  const rows = async (text: string, args: readonly unknown[]) => (await query(text, args).values()) as unknown as SubmissionRow[];
  const submissionRow = async (accountId: string, submissionId: string): Promise<SubmissionRow | undefined> =>
    (await rows(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE account_id = $1 AND id = $2`, [accountId, submissionId]))[0];

  const toAccount = (row: Record<string, unknown>): Account => ({ id: String(row.id), name: String(row.name), createdAt: String(row.created_at) });

  // Every request that carries a key looks it up: concurrent requests share a statement.
  const findApiKeyRow = lookupRounds(async (keyIds: readonly string[]) => {
    const found = await sql`SELECT * FROM api_keys WHERE id = ANY(${keyLookupArray(keyIds)}::text[])`;
    return new Map(found.map((row) => [String(row.id), row as Record<string, unknown>]));
  });

  let hashKey: Promise<string> | undefined;
  let rateLimitHits = 0;

  /** A list page's rows and the total, which every row of the statement carries (a row with no submission when the page is empty). */
  const listRows = async (accountId: string, list: SubmissionQuery): Promise<{ rows: SubmissionRow[]; total: number }> => {
    const { text, args } = listStatement(accountId, list);
    const result = (await query(text, args).values()) as unknown as [number, ...SubmissionRow][];
    return { rows: result.filter((row) => row[1] !== null).map((row) => row.slice(1) as unknown as SubmissionRow), total: Number(result[0]![0]) };
  };

  const store: CompleteStore = {
    insertSubmission: batchedInserts((accountId, rows) =>
      insert(accountId, rows, false).catch((error: unknown) => {
        throw storageFault(error);
      }),
    ),
    async getSubmission(accountId, submissionId) {
      const row = await submissionRow(accountId, submissionId);
      return row && rowToSubmission(row);
    },
    async getSubmissionAsJson(accountId, submissionId) {
      const row = await submissionRow(accountId, submissionId);
      return row && rowToJson(row);
    },
    async listSubmissions(accountId, list) {
      const { rows: found, total } = await listRows(accountId, list);
      return { items: found.map(rowToSubmission), total };
    },
    async listSubmissionsAsJson(accountId, list) {
      const { rows: found, total } = await listRows(accountId, list);
      const last = found.at(-1);
      return { items: found.map(rowToJson), total, ...(last === undefined ? {} : { last: { createdAt: Number(last[7]), submissionId: last[0] } }) };
    },
    async walkSubmissions(accountId, walk) {
      const { text, args } = walkStatement(accountId, walk);
      return (await rows(text, args)).map(rowToSubmission);
    },
    async walkSubmissionsAsJson(accountId, walk) {
      const { text, args } = walkStatement(accountId, walk);
      return (await rows(text, args)).map(rowToJson);
    },
    async walkSubmissionsAsNdjson(accountId, walk) {
      const { text, args } = walkStatement(accountId, walk);
      return ndjsonPage((await rows(text, args)).map(rowToJson));
    },
    async walkSubmissionsAsCsvParts(accountId, walk) {
      const { text, args } = walkStatement(accountId, walk);
      return csvPartsPage((await rows(text, args)).map(rowToSubmission));
    },
    async listDataKeys(accountId, filter, limit) {
      const result =
        filter.popupId === undefined
          ? await sql`SELECT DISTINCT key FROM submission_data_keys WHERE account_id = ${accountId} ORDER BY key LIMIT ${limit}`
          : await sql`SELECT key FROM submission_data_keys WHERE account_id = ${accountId} AND popup_id = ${filter.popupId} ORDER BY key LIMIT ${limit}`;
      return result.map((row) => String(row.key));
    },
    async importSubmissions(accountId, submissions) {
      if (submissions.length === 0) return 0;
      // Of two with one id, the first wins.
      const firsts = [...new Map(submissions.toReversed().map((s) => [s.submissionId, s])).values()].reverse();
      return insert(accountId, firsts, true);
    },
    async setSubmissionStatus(accountId, submissionId, status) {
      const now = Date.now();
      const [row] = await query(
        "SELECT formsink_set_status($1, $2, $3, $4, $5, $6, $7) AS found",
        [accountId, submissionId, status, now, newEventId(now), formatInstant(now), lockTimeout],
      );
      return row!.found === true;
    },
    async deleteSubmission(accountId, submissionId, reason = "api") {
      return (await deleteRows(accountId, [submissionId], reason)).length > 0;
    },
    async deleteSubmissions(accountId, submissionIds, reason) {
      if (submissionIds.length === 0) return [];
      return deleteRows(accountId, submissionIds, reason);
    },
    identifyingFields: settings.identifyingFields,
    async findSubmissionsByIdentifier(accountId, field, value) {
      const result = await sql`SELECT submission_id FROM submission_identifiers
        WHERE account_id = ${accountId} AND field = ${field} AND value_key = ${identifierKey(field, value)}`;
      return result.map((row) => String(row.submission_id));
    },
    async insertSubmissionOnce(accountId, s, idempotency, now) {
      const derived = derivedRecords([s], settings.identifyingFields, (popupId, key) => dataKeys.has(accountId, popupId, key));
      const [row] = await query(
        "SELECT * FROM formsink_insert_once($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        [
          accountId, idempotency.key, idempotency.fingerprint, s.submissionId, JSON.stringify(s), idempotency.expiresAt, now,
          records([s], Date.now()), derived.dataKeys, derived.identifiers, lockTimeout,
        ],
      );
      if (row!.inserted === true) {
        dataKeys.add(accountId, derived.keys);
        return { inserted: true };
      }
      return { inserted: false, fingerprint: String(row!.held_fingerprint), submission: JSON.parse(String(row!.held_submission)) as Submission };
    },

    async countRateLimitHit(bucket, windowStart, windowEnd) {
      // A bucket whose window ended starts again from 1. Ended windows of other buckets are
      // dropped now and then, not on every hit, so hits on different buckets never wait for each other.
      if (++rateLimitHits % 1000 === 0) await sql`DELETE FROM rate_limit_counters WHERE window_end <= ${windowStart}`;
      const [row] = await sql`INSERT INTO rate_limit_counters AS c (bucket, window_start, window_end, hits)
        VALUES (${bucket}, ${windowStart}, ${windowEnd}, 1)
        ON CONFLICT (bucket) DO UPDATE SET
          hits = CASE WHEN c.window_end <= excluded.window_start THEN 1 ELSE c.hits + 1 END,
          window_start = CASE WHEN c.window_end <= excluded.window_start THEN excluded.window_start ELSE GREATEST(c.window_start, excluded.window_start) END,
          window_end = CASE WHEN c.window_end <= excluded.window_start THEN excluded.window_end ELSE GREATEST(c.window_end, excluded.window_end) END
        RETURNING hits`;
      return Number(row!.hits);
    },

    async ensureAccount(name) {
      await sql`INSERT INTO accounts (id, name, created_at) VALUES (${crypto.randomUUID()}, ${name}, ${new Date().toISOString()})
        ON CONFLICT (name) DO NOTHING`;
      const [row] = await sql`SELECT id, name, created_at FROM accounts WHERE name = ${name}`;
      return toAccount(row!);
    },
    async findAccount(name) {
      const [row] = await sql`SELECT id, name, created_at FROM accounts WHERE name = ${name}`;
      return row && toAccount(row);
    },
    async insertApiKey(key) {
      await sql`INSERT INTO api_keys (id, account_id, kind, hash, domains, created_at, revoked_at)
        VALUES (${key.id}, ${key.accountId}, ${key.kind}, ${key.hash}, ${JSON.stringify(key.domains)}, ${key.createdAt}, ${key.revokedAt})`;
    },
    async findApiKey(keyId) {
      const row = await findApiKeyRow(keyId);
      return row && toApiKey(row);
    },
    async listApiKeys(filter = {}): Promise<ApiKeyListing[]> {
      const result =
        filter.accountName === undefined
          ? await sql`SELECT api_keys.*, accounts.name AS account_name FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id
              ORDER BY api_keys.created_at, api_keys.id`
          : await sql`SELECT api_keys.*, accounts.name AS account_name FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id
              WHERE accounts.name = ${filter.accountName} ORDER BY api_keys.created_at, api_keys.id`;
      return result.map((row) => {
        const { hash: _hash, ...key } = toApiKey(row);
        return { ...key, accountName: String(row.account_name) };
      });
    },
    async revokeApiKey(keyId, revokedAt) {
      const [row] = await sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${revokedAt}) WHERE id = ${keyId} RETURNING *`;
      return row && toApiKey(row);
    },

    async readEvents(accountId, eventQuery) {
      return parsedEventPage(await readEventTexts(query, accountId, eventQuery));
    },
    readEventsAsJson(accountId, eventQuery) {
      return readEventTexts(query, accountId, eventQuery);
    },
    async pruneEvents(before) {
      let total = 0;
      for (;;) {
        const [row] = await query(PRUNE_EVENTS, [before]);
        if (Number(row!.pruned) === 0) return total;
        total += Number(row!.pruned);
      }
    },

    ...postgresWebhookStore(query, lockTimeout),

    async ping() {
      await sql`SELECT 1`;
    },

    async insertErasureReceipt(accountId, receipt) {
      await sql`INSERT INTO erasure_receipts (account_id, id, field, value_hash, matched, deleted, submission_ids, requested_at, completed_at)
        VALUES (${accountId}, ${receipt.erasureId}, ${receipt.field}, ${receipt.valueHash}, ${receipt.matched}, ${receipt.deleted},
                ${JSON.stringify(receipt.submissionIds)}, ${receipt.requestedAt}, ${receipt.completedAt})`;
    },
    async getErasureReceipt(accountId, erasureId) {
      const [row] = await sql`SELECT * FROM erasure_receipts WHERE account_id = ${accountId} AND id = ${erasureId}`;
      return row && toErasureReceipt(row);
    },
    async listErasureReceipts(accountId) {
      const result = await sql`SELECT * FROM erasure_receipts WHERE account_id = ${accountId} ORDER BY requested_at, id`;
      return result.map(toErasureReceipt);
    },
    async setRetentionRules(accountId, rules) {
      if (rules.length === 0) await sql`DELETE FROM retention_rules WHERE account_id = ${accountId}`;
      else {
        await sql`INSERT INTO retention_rules (account_id, rules) VALUES (${accountId}, ${JSON.stringify(rules)})
          ON CONFLICT (account_id) DO UPDATE SET rules = excluded.rules`;
      }
    },
    async getRetentionRules(accountId) {
      const [row] = await sql`SELECT rules FROM retention_rules WHERE account_id = ${accountId}`;
      return row ? (JSON.parse(String(row.rules)) as RetentionRule[]) : [];
    },
    async listRetentionRules() {
      const result = await sql`SELECT account_id, rules FROM retention_rules ORDER BY account_id`;
      return result.map((row) => ({ accountId: String(row.account_id), rules: JSON.parse(String(row.rules)) as RetentionRule[] }));
    },
    erasureHashKey() {
      // Made once per database and never changed: read once per store.
      hashKey ??= (async () => {
        await sql`INSERT INTO formsink_settings (name, value) VALUES ('erasure_hash_key', ${randomHex(32)}) ON CONFLICT (name) DO NOTHING`;
        const [row] = await sql`SELECT value FROM formsink_settings WHERE name = 'erasure_hash_key'`;
        return String(row!.value);
      })().catch((error: unknown) => {
        hashKey = undefined;
        throw error;
      });
      return hashKey;
    },

    close: settings.close,
  };
  return withTimeLimits(store, timeoutMs);
}

/** Methods that may run long by design: a prune works through every old event, a statement at a time. */
const UNTIMED = new Set(["close", "pruneEvents"]);

/**
 * Every method of the store, answering `StoreUnavailable` for storage faults and, but for
 * UNTIMED ones, after `timeoutMs`.
 */
function withTimeLimits(store: CompleteStore, timeoutMs: number): CompleteStore {
  const limited: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    if (typeof value !== "function") {
      limited[name] = value;
      continue;
    }
    const call = (args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(store, args);
    limited[name] = UNTIMED.has(name)
      ? (...args: unknown[]) =>
          call(args).catch((error: unknown) => {
            throw storageFault(error);
          })
      : (...args: unknown[]) => withinTime(timeoutMs, () => call(args));
  }
  return limited as unknown as CompleteStore;
}

/** What PostgreSQL's generic plan of `id = ANY($1)` assumes an array parameter holds. */
const PLANNED_ARRAY_LENGTH = 10;

/**
 * The ids of a round of key lookups as the statement's array, padded with repeats of the first
 * to the length a generic plan assumes (bench/postgres.ts, durable create: every create looks
 * its key up). A prepared statement is planned for its parameters' values until a plan for any
 * values costs no more; a shorter array costs less, so each round was planned anew, which cost
 * PostgreSQL more than running it. A repeated id matches its row once.
 */
function keyLookupArray(keyIds: readonly string[]): string {
  const padded = keyIds.length >= PLANNED_ARRAY_LENGTH ? keyIds : [...keyIds, ...Array<string>(PLANNED_ARRAY_LENGTH - keyIds.length).fill(keyIds[0]!)];
  return textArrayLiteral(padded);
}

/**
 * `values` as a PostgreSQL array literal (`{"a","b"}`), each element quoted. The driver writes
 * a JavaScript array only once it has read the server's array types, which the store does not
 * ask it to (index.ts: `fetch_types`).
 */
function textArrayLiteral(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
}
