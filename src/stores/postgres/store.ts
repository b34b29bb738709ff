/**
 * The store on PostgreSQL, over the `postgres` package. Several formsink servers can share one
 * database: every rule that must hold across them is kept by the database.
 *
 * Every write transaction of an account starts by locking the account's row in `event_heads`
 * (`write`), so an account's writes commit one after another, whichever server makes them.
 * That one rule gives the change log positions that grow in commit order (events.ts), makes an
 * Idempotency-Key raced on two connections store one submission (the second finds the first's
 * record), and keeps lock order fixed (head, then rows and counts), so writers never deadlock.
 * Different accounts never wait for each other.
 */
import type postgres from "postgres";
import { randomHex } from "../../hex.ts";
import {
  type Account, type ApiKeyListing, type ApiKeyRecord, type CompleteStore, type ErasureReceipt, identifierKey, type RetentionRule,
} from "../../store.ts";
import type { Submission } from "../../submission.ts";
import {
  APPEND_EVENTS, createdEventText, deletedEntry, type EventEntry, PRUNE_EVENTS, readEventTexts, statusChangedEntry,
} from "./events.ts";
import { withinTime } from "./faults.ts";
import { listStatement, rowToJson, rowToSubmission, SUBMISSION_COLUMNS, submissionRecord, type SubmissionRow, walkStatement } from "./rows.ts";

type Sql = postgres.Sql;
type Tx = postgres.TransactionSql;

export interface PostgresStoreSettings {
  /** Milliseconds a store call may take before it is answered `StoreUnavailable`. */
  timeoutMs: number;
  identifyingFields: readonly string[];
  /** Run when the store is closed. */
  close: () => Promise<void>;
}

/**
 * Inserts the rows of $2 (a JSON array of `submissionRecord`s) into account $1 with their created
 * events stamped $3, their data keys and identifiers; returns the ids inserted, in the given
 * order. `onConflict` is empty (a duplicate id fails the statement) or `ON CONFLICT DO NOTHING`
 * (skipped). Run after `write` locked the head.
 */
const insertRows = (onConflict: string) => `WITH input AS (
    SELECT * FROM ROWS FROM (json_to_recordset($2::text::json) AS (
      id text, popup_id text, data text, domain text, user_agent text, device text, status text, created_at bigint, event text))
    WITH ORDINALITY AS r(id, popup_id, data, domain, user_agent, device, status, created_at, event, ord)),
  inserted AS (
    INSERT INTO submissions (account_id, ${SUBMISSION_COLUMNS})
    SELECT $1, id, popup_id, data, domain, user_agent, device, status, created_at FROM input ORDER BY ord
    ${onConflict} RETURNING id, popup_id, status, data),
  numbered AS (
    SELECT inserted.*, input.event, row_number() OVER (ORDER BY input.ord) AS n FROM inserted JOIN input ON input.id = inserted.id),
  head AS (
    UPDATE event_heads SET position = position + (SELECT COUNT(*) FROM numbered) WHERE account_id = $1
    RETURNING position - (SELECT COUNT(*) FROM numbered) AS base),
  created AS (
    INSERT INTO events (account_id, position, type, at, popup_id, submission_id, created_status, event)
    SELECT $1, head.base + numbered.n, 'submission.created', $3::bigint, numbered.popup_id, numbered.id, numbered.status, numbered.event
    FROM head, numbered),
  data_keys AS (
    INSERT INTO submission_data_keys (account_id, popup_id, key)
    SELECT DISTINCT $1, numbered.popup_id, key FROM numbered, json_object_keys(numbered.data::json) AS key
    ORDER BY 2, 3 ON CONFLICT DO NOTHING),
  identifiers AS (
    INSERT INTO submission_identifiers (account_id, field, value_key, submission_id)
    SELECT $1, d.key, formsink_identifier_key(d.key, d.value #>> '{}'), numbered.id
    FROM numbered, json_each(numbered.data::json) AS d, identifying_fields f
    WHERE f.field = d.key AND json_typeof(d.value) = 'string' ON CONFLICT DO NOTHING)
  SELECT id FROM numbered ORDER BY n`;

const INSERT_NEW = insertRows("");
const INSERT_UNLESS_PRESENT = insertRows("ON CONFLICT (account_id, id) DO NOTHING");

/** Deletes the ids of $2 (JSON array) of account $1 with their idempotency records and identifiers; returns id and popup of each. */
const DELETE_ROWS = `WITH gone AS (
    DELETE FROM submissions WHERE account_id = $1 AND id IN (SELECT json_array_elements_text($2::text::json)) RETURNING id, popup_id),
  records AS (DELETE FROM idempotency_keys WHERE account_id = $1 AND submission_id IN (SELECT id FROM gone)),
  identifiers AS (DELETE FROM submission_identifiers WHERE account_id = $1 AND submission_id IN (SELECT id FROM gone))
  SELECT id, popup_id FROM gone`;

export function postgresStore(sql: Sql, settings: PostgresStoreSettings): CompleteStore {
  const { timeoutMs } = settings;
  const lockHead = `INSERT INTO event_heads (account_id, position) VALUES ($1, 0)
    ON CONFLICT (account_id) DO UPDATE SET position = event_heads.position`;

  /**
   * Runs `body` in a transaction of the account that first locks the account's head row (see
   * the top of this file). The lock and the body's first statements go out in one pipeline.
   */
  const write = <T>(accountId: string, body: (tx: Tx) => Promise<T>): Promise<T> =>
    sql.begin(async (tx) => {
      // Sent in the order they are executed: these two before anything of the body.
      const first = [
        tx.unsafe(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`).execute(),
        tx.unsafe(lockHead, [accountId]).execute(),
      ];
      const [, , result] = await Promise.all([...first, body(tx)]);
      return result;
    }) as Promise<T>;

  const appendEvents = (tx: Tx, accountId: string, entries: readonly EventEntry[], now: number) =>
    entries.length === 0 ? Promise.resolve() : tx.unsafe(APPEND_EVENTS, [accountId, entries.length, now, JSON.stringify(entries)]);

  const records = (submissions: readonly Submission[], now: number) =>
    JSON.stringify(submissions.map((s) => submissionRecord(s, createdEventText(now))));

  const deleteRows = async (accountId: string, submissionIds: readonly string[], reason: Parameters<typeof deletedEntry>[2]) =>
    write(accountId, async (tx) => {
      const now = Date.now();
      const gone = (await tx.unsafe(DELETE_ROWS, [accountId, JSON.stringify(submissionIds)])) as unknown as { id: string; popup_id: string }[];
      await appendEvents(tx, accountId, gone.map((row) => deletedEntry(row.id, row.popup_id, reason, now)), now);
      return gone.map((row) => row.id);
    });

  const rows = async (text: string, args: readonly unknown[]) =>
    (await sql.unsafe(text, args as postgres.ParameterOrJSON<never>[], { prepare: true }).values()) as unknown as SubmissionRow[];

  const toAccount = (row: Record<string, unknown>): Account => ({ id: String(row.id), name: String(row.name), createdAt: String(row.created_at) });

  let hashKey: Promise<string> | undefined;
  let rateLimitHits = 0;

  const store: CompleteStore = {
    async insertSubmission(accountId, s) {
      const now = Date.now();
      await write(accountId, (tx) => tx.unsafe(INSERT_NEW, [accountId, records([s], now), now]));
    },
    async getSubmission(accountId, submissionId) {
      const [row] = await rows(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE account_id = $1 AND id = $2`, [accountId, submissionId]);
      return row && rowToSubmission(row);
    },
    async listSubmissions(accountId, query) {
      const { text, args } = listStatement(accountId, query);
      const result = (await sql.unsafe(text, args, { prepare: true }).values()) as unknown as [number, ...SubmissionRow][];
      const items = result.filter((row) => row[1] !== null).map((row) => rowToSubmission(row.slice(1) as unknown as SubmissionRow));
      return { items, total: Number(result[0]![0]) };
    },
    async walkSubmissions(accountId, walk) {
      const { text, args } = walkStatement(accountId, walk);
      return (await rows(text, args)).map(rowToSubmission);
    },
    async walkSubmissionsAsJson(accountId, walk) {
      const { text, args } = walkStatement(accountId, walk);
      return (await rows(text, args)).map(rowToJson);
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
      const now = Date.now();
      const inserted = await write(accountId, (tx) => tx.unsafe(INSERT_UNLESS_PRESENT, [accountId, records(firsts, now), now]));
      return inserted.length;
    },
    async setSubmissionStatus(accountId, submissionId, status) {
      return write(accountId, async (tx) => {
        const [row] = (await tx.unsafe(
          `WITH old AS (SELECT popup_id, status FROM submissions WHERE account_id = $1 AND id = $2),
             changed AS (UPDATE submissions SET status = $3 WHERE account_id = $1 AND id = $2 AND status <> $3 RETURNING 1)
           SELECT old.popup_id, old.status, EXISTS (SELECT 1 FROM changed) AS changed FROM old`,
          [accountId, submissionId, status],
        )) as unknown as { popup_id: string; status: string; changed: boolean }[];
        if (row === undefined) return false;
        if (row.changed) {
          const now = Date.now();
          await appendEvents(tx, accountId, [statusChangedEntry(submissionId, row.popup_id, status, row.status, now)], now);
        }
        return true;
      });
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
      return write(accountId, async (tx) => {
        // The head lock makes this the account's only writer: what the record table holds now stays so until commit.
        const [holder] = (await tx.unsafe(
          `WITH expired AS (DELETE FROM idempotency_keys WHERE account_id = $1 AND expires_at <= $3::bigint)
           SELECT fingerprint, submission FROM idempotency_keys WHERE account_id = $1 AND idempotency_key = $2 AND expires_at > $3::bigint`,
          [accountId, idempotency.key, now],
        )) as unknown as { fingerprint: string; submission: string }[];
        if (holder) return { inserted: false as const, fingerprint: holder.fingerprint, submission: JSON.parse(holder.submission) as Submission };
        await Promise.all([
          tx.unsafe(
            `INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, submission_id, submission, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6::bigint)`,
            [accountId, idempotency.key, idempotency.fingerprint, s.submissionId, JSON.stringify(s), idempotency.expiresAt],
          ),
          tx.unsafe(INSERT_NEW, [accountId, records([s], Date.now()), Date.now()]),
        ]);
        return { inserted: true as const };
      });
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
      const [row] = await sql`SELECT * FROM api_keys WHERE id = ${keyId}`;
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

    async readEvents(accountId, query) {
      const page = await readEventTexts((text, args) => sql.unsafe(text, args as never[], { prepare: true }), accountId, query);
      return page.expired ? page : { ...page, events: page.events.map((text) => JSON.parse(text) as never) };
    },
    readEventsAsJson(accountId, query) {
      return readEventTexts((text, args) => sql.unsafe(text, args as never[], { prepare: true }), accountId, query);
    },
    async pruneEvents(before) {
      const [row] = await sql.unsafe(PRUNE_EVENTS, [before]);
      return Number(row!.pruned);
    },

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

/** Every method of the store, answering `StoreUnavailable` for storage faults and after `timeoutMs`. */
function withTimeLimits(store: CompleteStore, timeoutMs: number): CompleteStore {
  const limited: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    limited[name] =
      typeof value === "function" && name !== "close"
        ? (...args: unknown[]) => withinTime(timeoutMs, () => (value as (...a: unknown[]) => Promise<unknown>).apply(store, args))
        : value;
  }
  return limited as unknown as CompleteStore;
}

function toApiKey(row: Record<string, unknown>): ApiKeyRecord {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    kind: String(row.kind) === "publishable" ? "publishable" : "secret",
    hash: String(row.hash),
    domains: JSON.parse(String(row.domains)) as string[],
    createdAt: String(row.created_at),
    revokedAt: row.revoked_at === null ? null : String(row.revoked_at),
  };
}

function toErasureReceipt(row: Record<string, unknown>): ErasureReceipt {
  return {
    erasureId: String(row.id),
    field: String(row.field),
    valueHash: String(row.value_hash),
    matched: Number(row.matched),
    deleted: Number(row.deleted),
    submissionIds: JSON.parse(String(row.submission_ids)) as string[],
    requestedAt: String(row.requested_at),
    completedAt: String(row.completed_at),
  };
}
