/**
 * Webhook endpoints and their outbox in PostgreSQL (`WebhookStore`, migration 2). The outbox is
 * the change log plus delivery state: a create writes nothing here, and a claim first moves each
 * enabled endpoint's new events into its deliveries.
 *
 * A claim is one call of `formsink_claim_deliveries` (so no client-side transaction, as in
 * writes.ts). It first locks the rows of the endpoints that have something to claim, skipping
 * those another claim holds: one endpoint's deliveries are taken by one claim at a time,
 * whichever server sends it, so two dispatchers never lease one delivery and an endpoint's run
 * of first attempts is leased whole, in commit order. Every later statement of the function
 * takes a fresh snapshot, so it sees what the endpoint's previous claim committed. A dispatcher's
 * outcomes and its next claim are one call of `formsink_record_and_claim_deliveries` (migration
 * 8): the record, then that claim, in one transaction. Since migration 9 a claim waits for no
 * delivery (CLAIM_SKIPPING_HELD) and finds each one by its key (KEY_PROBES_ONLY).
 */
import type { EventType } from "../../events.ts";
import { type ClaimedDelivery, type DeliveryAttempt, type WebhookChange, WebhookLimitReached, type WebhookStore } from "../../store.ts";
import { toDelivery, toWebhook, WEBHOOK_CHANGES } from "../sql/records.ts";
import { eventText, type EventTextRow, type Query } from "./events.ts";

// The texts below that a migration's function is built from (MATCHES, EVENT_ID, CLAIMED_COLUMNS,
// LOCKED_IN_KEY_ORDER, LEASE_RELEASED, ...) are part of released migrations: never edited, as
// the migrations themselves (test/stores/released-migrations.test.ts fails when one changes). A
// live query that needs another text takes one of its own.

/** True for an event `e` the endpoint `w` subscribes to. */
const MATCHES = `(w.types IS NULL OR e.type IN (SELECT json_array_elements_text(w.types::json)))
  AND (w.popup_id IS NULL OR e.popup_id = w.popup_id)`;

/** The event's id, read from its stored text: a created event keeps only the text before its data (events.ts). */
const EVENT_ID = `(CASE WHEN e.type = 'submission.created' THEN e.event || 'null}' ELSE e.event END)::json ->> 'id'`;

/**
 * The event's columns the claim returns and their join, as events.ts's EVENT_TEXT_COLUMNS and
 * EVENT_TEXT_JOIN were when migration 2 was released: frozen here, so that a change of the log's
 * own reads never changes what a released migration creates.
 */
const CLAIMED_EVENT_COLUMNS = `e.type, e.event, e.created_status, e.submission_id, e.popup_id,
    s.id, s.popup_id AS s_popup_id, s.data, s.domain, s.user_agent, s.device, s.created_at`;
const CLAIMED_EVENT_JOIN = "LEFT JOIN submissions s ON e.type = 'submission.created' AND s.account_id = e.account_id AND s.id = e.submission_id";

/** The columns of a claimed delivery, as `formsink_claim_deliveries` returns them (and migration 8's function after it). */
const CLAIMED_COLUMNS = `    account_id text, webhook_id text, "position" bigint, event_id text, event_type text, attempts integer, first_attempt_at bigint,
    url text, types text, w_popup_id text, description text, w_created_at text, disabled_at text, secrets text,
    previous_secret_expires_at bigint, failing_since bigint,
    type text, event text, created_status text, submission_id text, popup_id text,
    id text, s_popup_id text, data text, domain text, user_agent text, device text, created_at bigint`;

/**
 * Leases to $4 until $3 at most $2 deliveries due at $1 and returns them with their endpoints
 * and events; `lease` is the CTE that leases the chosen deliveries. As CLAIM it is part of
 * migration 2, as CLAIM_LOCKING_IN_ORDER of migration 4, as CLAIM_SKIPPING_HELD of migration 9:
 * never edited once released; a change is a new migration.
 */
const claimFunction = (create: string, lease: string) => `${create} formsink_claim_deliveries(p_now bigint, p_limit integer, p_lease_until bigint, p_owner text, p_lock_timeout text)
  RETURNS TABLE (
${CLAIMED_COLUMNS})
  LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  locked_accounts text[];
  locked_ids text[];
BEGIN
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  -- The enabled endpoints with new events, a first attempt that may go, or a due retry.
  SELECT array_agg(w.account_id), array_agg(w.id) INTO locked_accounts, locked_ids FROM (
    SELECT w.account_id, w.id FROM webhooks w
    WHERE w.disabled_at IS NULL AND (
      w.log_position < (SELECT h.position FROM event_heads h WHERE h.account_id = w.account_id)
      OR EXISTS (SELECT 1 FROM (
          SELECT d.next_attempt_at, d.lease_until FROM webhook_deliveries d
          WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending' AND d.attempts = 0
          ORDER BY d.position LIMIT 1) AS oldest
        WHERE oldest.next_attempt_at <= p_now AND COALESCE(oldest.lease_until, 0) <= p_now)
      OR EXISTS (SELECT 1 FROM webhook_deliveries d
        WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending' AND d.attempts > 0
          AND d.next_attempt_at <= p_now AND COALESCE(d.lease_until, 0) <= p_now))
    FOR NO KEY UPDATE SKIP LOCKED) AS w;
  IF locked_accounts IS NULL THEN
    RETURN;
  END IF;

  WITH targets AS (
      SELECT w.account_id, w.id, w.log_position, w.types, w.popup_id, h.position AS newest
      FROM unnest(locked_accounts, locked_ids) AS l(account_id, id)
      JOIN webhooks w ON w.account_id = l.account_id AND w.id = l.id
      JOIN event_heads h ON h.account_id = w.account_id
      WHERE w.log_position < h.position),
    moved AS (
      INSERT INTO webhook_deliveries (account_id, webhook_id, position, event_id, event_type, status, attempts, next_attempt_at)
      SELECT w.account_id, w.id, e.position, ${EVENT_ID}, e.type, 'pending', 0, p_now
      FROM targets w JOIN events e ON e.account_id = w.account_id AND e.position > w.log_position AND e.position <= w.newest
      WHERE ${MATCHES}
      ON CONFLICT DO NOTHING)
  UPDATE webhooks w SET log_position = t.newest FROM targets t WHERE w.account_id = t.account_id AND w.id = t.id;

  -- Each endpoint's run of never-attempted deliveries, from the oldest up to the first one that
  -- is leased or not yet due, before due retries in order of first attempt. A delivery of a
  -- pruned event (a prune racing the claim that moved it can leave one) is never claimed.
  RETURN QUERY WITH endpoints AS (
      SELECT w.account_id, w.id, h.pruned_through FROM unnest(locked_accounts, locked_ids) AS l(account_id, id)
      JOIN webhooks w ON w.account_id = l.account_id AND w.id = l.id
      JOIN event_heads h ON h.account_id = w.account_id),
    firsts AS (
      SELECT run.account_id, run.webhook_id, run.position, 0 AS kind, 0::bigint AS since FROM endpoints w CROSS JOIN LATERAL (
        SELECT d.*, bool_or(d.next_attempt_at > p_now OR COALESCE(d.lease_until, 0) > p_now) OVER (ORDER BY d.position) AS held
        FROM (SELECT * FROM webhook_deliveries d
              WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending' AND d.attempts = 0 AND d.position > w.pruned_through
              ORDER BY d.position LIMIT p_limit) AS d) AS run
      WHERE NOT run.held),
    retries AS (
      SELECT due.account_id, due.webhook_id, due.position, 1 AS kind, due.first_attempt_at AS since FROM endpoints w CROSS JOIN LATERAL (
        SELECT * FROM webhook_deliveries d
        WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending' AND d.attempts > 0 AND d.position > w.pruned_through
          AND d.next_attempt_at <= p_now AND COALESCE(d.lease_until, 0) <= p_now
        ORDER BY d.first_attempt_at, d.position LIMIT p_limit) AS due),
    chosen AS (
      SELECT * FROM (SELECT * FROM firsts UNION ALL SELECT * FROM retries) AS c ORDER BY c.kind, c.since, c.position LIMIT p_limit),
${lease}
      WHERE d.account_id = c.account_id AND d.webhook_id = c.webhook_id AND d.position = c.position
        AND d.status = 'pending' AND d.next_attempt_at <= p_now AND COALESCE(d.lease_until, 0) <= p_now
      RETURNING d.account_id, d.webhook_id, d.position, d.event_id, d.event_type, d.attempts, d.first_attempt_at, c.kind, c.since)
  SELECT d.account_id, d.webhook_id, d.position, d.event_id, d.event_type, d.attempts, d.first_attempt_at,
    w.url, w.types, w.popup_id, w.description, w.created_at, w.disabled_at, w.secrets, w.previous_secret_expires_at, w.failing_since,
    ${CLAIMED_EVENT_COLUMNS}
  FROM leased d
  JOIN webhooks w ON w.account_id = d.account_id AND w.id = d.webhook_id
  JOIN events e ON e.account_id = d.account_id AND e.position = d.position
  ${CLAIMED_EVENT_JOIN}
  ORDER BY d.kind, d.since, d.position;
END $$`;

const CLAIM = claimFunction(
  "CREATE FUNCTION",
  `    leased AS (
      UPDATE webhook_deliveries d SET lease_owner = p_owner, lease_until = p_lease_until
      FROM chosen c`,
);

/**
 * Every statement that locks several deliveries locks them in key order (account, endpoint,
 * position) before changing them: a claim re-leasing deliveries whose lease ran out and the
 * recording of their earlier attempts touch the same rows, and in the order each plan happened
 * to visit them they could each hold a row the other waits for (a deadlock, which PostgreSQL
 * ends by failing one of them).
 */
const LOCKED_IN_KEY_ORDER = (deliveries: string, match: string) => `SELECT d.account_id, d.webhook_id, d.position FROM webhook_deliveries d
      JOIN ${deliveries} ON ${match}
      ORDER BY d.account_id, d.webhook_id, d.position FOR UPDATE OF d`;

/** The claim as migration 4 replaces it: the deliveries it leases are locked in key order first. */
const CLAIM_LOCKING_IN_ORDER = claimFunction(
  "CREATE OR REPLACE FUNCTION",
  `    locked AS MATERIALIZED (
      ${LOCKED_IN_KEY_ORDER("chosen c", "d.account_id = c.account_id AND d.webhook_id = c.webhook_id AND d.position = c.position")}),
    leased AS (
      UPDATE webhook_deliveries d SET lease_owner = p_owner, lease_until = p_lease_until
      FROM chosen c JOIN locked l ON l.account_id = c.account_id AND l.webhook_id = c.webhook_id AND l.position = c.position`,
);

/**
 * The claim as migration 9 replaces it: it skips a delivery another transaction holds rather than
 * wait for it, and an endpoint's run of first attempts stops at the first one skipped, so that
 * the ones after it still go after it. What holds a delivery the claim would take is a recording
 * of its attempt by a dispatcher whose lease ran out (or a retry or replay the user asked for):
 * the claim after it finds it recorded. A claim that waited could deadlock: two dispatchers late
 * with their outcomes, each recording and then claiming in one transaction (migration 8), each
 * holding what it recorded and waiting for what the other recorded. A claim now waits for no
 * delivery, so no such circle closes.
 */
const CLAIM_SKIPPING_HELD = claimFunction(
  "CREATE OR REPLACE FUNCTION",
  `    locked AS MATERIALIZED (
      ${LOCKED_IN_KEY_ORDER("chosen c", "d.account_id = c.account_id AND d.webhook_id = c.webhook_id AND d.position = c.position")} SKIP LOCKED),
    taken AS (
      SELECT c.* FROM chosen c WHERE c.kind = 1 OR NOT EXISTS (
        SELECT 1 FROM chosen s WHERE s.kind = 0 AND s.account_id = c.account_id AND s.webhook_id = c.webhook_id AND s.position <= c.position
          AND NOT EXISTS (SELECT 1 FROM locked l WHERE l.account_id = s.account_id AND l.webhook_id = s.webhook_id AND l.position = s.position))),
    leased AS (
      UPDATE webhook_deliveries d SET lease_owner = p_owner, lease_until = p_lease_until
      FROM taken c JOIN locked l ON l.account_id = c.account_id AND l.webhook_id = c.webhook_id AND l.position = c.position`,
);

/** Migration 4's part: the claim locks what it leases in key order (CLAIM_LOCKING_IN_ORDER). */
export const CLAIM_MIGRATION: readonly string[] = [CLAIM_LOCKING_IN_ORDER];

/**
 * Adds an endpoint unless the account has `p_most`; false when it has. The account's head row is
 * locked first (formsink_lock_head, writes.ts), so adds to one account run one after another
 * whichever server sends them, and the count, a statement of its own and so a fresh snapshot,
 * sees every add committed before it: adds at once never take an account past its limit.
 */
const INSERT_WEBHOOK_WITHIN_LIMIT = `CREATE FUNCTION formsink_insert_webhook(p_account text, p_id text, p_url text, p_types text,
    p_popup text, p_description text, p_created_at text, p_disabled_at text, p_secrets text, p_previous_secret_expires_at bigint,
    p_failing_since bigint, p_most bigint, p_lock_timeout text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  PERFORM formsink_lock_head(p_account, p_lock_timeout);
  IF (SELECT COUNT(*) FROM webhooks WHERE account_id = p_account) >= p_most THEN
    RETURN false;
  END IF;
  INSERT INTO webhooks (account_id, id, url, types, popup_id, description, created_at, disabled_at, secrets, previous_secret_expires_at,
      failing_since, log_position)
    VALUES (p_account, p_id, p_url, p_types, p_popup, p_description, p_created_at, p_disabled_at, p_secrets, p_previous_secret_expires_at,
      p_failing_since, (SELECT position FROM event_heads WHERE account_id = p_account));
  RETURN true;
END $$`;

/** Migration 5: adding an endpoint counts within its lock (INSERT_WEBHOOK_WITHIN_LIMIT). */
export const WEBHOOK_LIMIT_MIGRATION: readonly string[] = [INSERT_WEBHOOK_WITHIN_LIMIT];

/** Migration 2: endpoints and their deliveries, and the claim. */
export const WEBHOOK_MIGRATION = (TEXT: string): readonly string[] => [
  // `log_position` is an endpoint's place in the log: the newest position it has taken into its
  // deliveries, or skipped while disabled. `added` keeps the order endpoints were added in.
  `CREATE TABLE webhooks (
    account_id ${TEXT} NOT NULL,
    id ${TEXT} NOT NULL,
    added bigint GENERATED ALWAYS AS IDENTITY,
    url ${TEXT} NOT NULL,
    types ${TEXT},                    -- JSON array of event types; NULL for every type
    popup_id ${TEXT},
    description ${TEXT},
    created_at ${TEXT} NOT NULL,
    disabled_at ${TEXT},
    secrets ${TEXT} NOT NULL,         -- JSON array, newest first
    previous_secret_expires_at bigint,
    failing_since bigint,
    log_position bigint NOT NULL,
    PRIMARY KEY (account_id, id)
  )`,
  // One row per (endpoint, event) with the event's id and type (what the log lists and a retry
  // names) and the lease that lets one dispatcher at a time make an attempt. Deleting an
  // endpoint takes its deliveries along; pruning the log takes its events' (events.ts).
  `CREATE TABLE webhook_deliveries (
    account_id ${TEXT} NOT NULL,
    webhook_id ${TEXT} NOT NULL,
    position bigint NOT NULL,
    event_id ${TEXT} NOT NULL,
    event_type ${TEXT} NOT NULL,
    status ${TEXT} NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts integer NOT NULL,
    first_attempt_at bigint,          -- epoch milliseconds, as every time below
    last_attempt_at bigint,
    next_attempt_at bigint,           -- while pending
    last_status_code integer,
    last_error ${TEXT},
    last_duration_ms integer,
    lease_owner ${TEXT},
    lease_until bigint,
    PRIMARY KEY (account_id, webhook_id, position),
    FOREIGN KEY (account_id, webhook_id) REFERENCES webhooks (account_id, id) ON DELETE CASCADE
  )`,
  // A claim reads only pending deliveries: each endpoint's run of never-attempted ones in
  // position order, and its due retries.
  `CREATE INDEX webhook_deliveries_unattempted ON webhook_deliveries (account_id, webhook_id, position) WHERE status = 'pending' AND attempts = 0`,
  `CREATE INDEX webhook_deliveries_retries ON webhook_deliveries (account_id, webhook_id, next_attempt_at) WHERE status = 'pending' AND attempts > 0`,
  `CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (account_id, webhook_id, event_id)`,
  CLAIM,
];

/** An attempt's lease let go: by its outcome, or taken from it by a retry or replay the user asked for (which then wins). */
const LEASE_RELEASED = "lease_owner = NULL, lease_until = NULL";

/** The account's newest position (0 for an empty log). */
const NEWEST_POSITION = (account: string) => `COALESCE((SELECT position FROM event_heads WHERE event_heads.account_id = ${account}), 0)`;

/** `lockTimeout`: how long the claim waits for a row another write holds (a 503 after it). */
export function postgresWebhookStore(query: Query, lockTimeout: string): WebhookStore {
  return {
    async insertWebhook(accountId, webhook, most) {
      const [row] = await query("SELECT formsink_insert_webhook($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS inserted", [
        accountId, webhook.webhookId, webhook.url, WEBHOOK_CHANGES.types.write(webhook.types), webhook.popupId, webhook.description,
        webhook.createdAt, webhook.disabledAt, JSON.stringify(webhook.secrets), webhook.previousSecretExpiresAt, webhook.failingSince,
        most ?? Number.MAX_SAFE_INTEGER, lockTimeout,
      ]);
      if (!row!.inserted) throw new WebhookLimitReached();
    },
    async getWebhook(accountId, webhookId) {
      const [row] = await query("SELECT * FROM webhooks WHERE account_id = $1 AND id = $2", [accountId, webhookId]);
      return row && toWebhook(row);
    },
    async listWebhooks(accountId) {
      return (await query("SELECT * FROM webhooks WHERE account_id = $1 ORDER BY created_at, added", [accountId])).map(toWebhook);
    },
    async updateWebhook(accountId, webhookId, change) {
      const assignments: string[] = [];
      const args: unknown[] = [accountId, webhookId];
      for (const key of Object.keys(WEBHOOK_CHANGES) as (keyof WebhookChange)[]) {
        if (change[key] === undefined) continue;
        const field = WEBHOOK_CHANGES[key] as { column: string; write: (value: unknown) => unknown };
        args.push(field.write(change[key]));
        assignments.push(`${field.column} = $${args.length}`);
      }
      // Enabled again, it takes the events from now on: what came while it was disabled is skipped.
      if (change.disabledAt === null) {
        assignments.push(`log_position = CASE WHEN webhooks.disabled_at IS NULL THEN log_position ELSE ${NEWEST_POSITION("$1")} END`);
      }
      const [row] = await query(
        `UPDATE webhooks SET ${assignments.join(", ") || "id = id"} WHERE account_id = $1 AND id = $2 RETURNING *`,
        args,
      );
      return row && toWebhook(row);
    },
    async deleteWebhook(accountId, webhookId) {
      return (await query("DELETE FROM webhooks WHERE account_id = $1 AND id = $2 RETURNING 1", [accountId, webhookId])).length > 0;
    },

    async claimDeliveries({ now, limit, leaseMs, owner }) {
      const rows = await query("SELECT * FROM formsink_claim_deliveries($1, $2, $3, $4, $5)", [now, limit, now + leaseMs, owner, lockTimeout]);
      return rows.map(toClaimedDelivery);
    },
    async recordDeliveryAttempt(attempt) {
      const [recorded] = await recordAttempts(query, [attempt]);
      return recorded!;
    },
    recordDeliveryAttempts(attempts) {
      return attempts.length === 0 ? Promise.resolve([]) : recordAttempts(query, attempts);
    },
    async recordAndClaimDeliveries(attempts, { now, limit, leaseMs, owner }) {
      const [answer, ...claimed] = await query("SELECT * FROM formsink_record_and_claim_deliveries($1, $2, $3, $4, $5, $6)", [
        attemptsJson(attempts), now, limit, now + leaseMs, owner, lockTimeout,
      ]);
      return { recorded: recordedOf(attempts.length, answer!.recorded), claimed: claimed.map(toClaimedDelivery) };
    },
    async listDeliveries(accountId, webhookId, deliveryQuery) {
      const rows = await query(
        `SELECT * FROM webhook_deliveries WHERE account_id = $1 AND webhook_id = $2 AND position < $3 AND ($4::text IS NULL OR status = $4::text)
         ORDER BY position DESC LIMIT $5`,
        [accountId, webhookId, deliveryQuery.after ?? Number.MAX_SAFE_INTEGER, deliveryQuery.status ?? null, deliveryQuery.limit + 1],
      );
      const deliveries = rows.slice(0, deliveryQuery.limit).map(toDelivery);
      return { deliveries, cursor: rows.length > deliveryQuery.limit ? deliveries.at(-1)!.position : null };
    },
    async retryDelivery(accountId, webhookId, eventId, now) {
      const rows = await query(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $4, ${LEASE_RELEASED}
         WHERE account_id = $1 AND webhook_id = $2 AND event_id = $3 RETURNING 1`,
        [accountId, webhookId, eventId, now],
      );
      return rows.length > 0;
    },
    async hasEnabledWebhooks() {
      const rows = await query("SELECT EXISTS (SELECT 1 FROM webhooks WHERE disabled_at IS NULL) AS enabled", []);
      return rows[0]!.enabled === true;
    },
    async replayDeliveries(accountId, webhookId, since, now) {
      const rows = await query(
        `INSERT INTO webhook_deliveries (account_id, webhook_id, position, event_id, event_type, status, attempts, next_attempt_at)
         SELECT w.account_id, w.id, e.position, ${EVENT_ID}, e.type, 'pending', 0, $4
         FROM webhooks w JOIN events e ON e.account_id = w.account_id
         WHERE w.account_id = $1 AND w.id = $2 AND e.at >= $3 AND ${MATCHES}
         ON CONFLICT (account_id, webhook_id, position) DO UPDATE SET status = 'pending', next_attempt_at = excluded.next_attempt_at, ${LEASE_RELEASED}
         RETURNING 1`,
        [accountId, webhookId, since, now],
      );
      return rows.length;
    },
  };
}

/**
 * Records each attempt of the JSON array `attempts` (a SQL expression of type json) and releases
 * its lease, returning the ordinal (from 1) of each attempt whose `owner` held the lease.
 */
const ATTEMPTS_RECORDED = (attempts: string) => `WITH a AS MATERIALIZED (
       SELECT * FROM ROWS FROM (json_to_recordset(${attempts}) AS (
         account_id text, webhook_id text, position bigint, owner text, at bigint, duration_ms integer, status_code integer, error text,
         status text, next_attempt_at bigint)) WITH ORDINALITY AS a(account_id, webhook_id, position, owner, at, duration_ms, status_code, error,
         status, next_attempt_at, ord)),
     locked AS MATERIALIZED (
       ${LOCKED_IN_KEY_ORDER("a", "d.account_id = a.account_id AND d.webhook_id = a.webhook_id AND d.position = a.position AND d.lease_owner = a.owner")})
     UPDATE webhook_deliveries d SET
       status = a.status, attempts = d.attempts + 1, first_attempt_at = COALESCE(d.first_attempt_at, a.at), last_attempt_at = a.at,
       next_attempt_at = a.next_attempt_at, last_status_code = a.status_code, last_error = a.error, last_duration_ms = a.duration_ms,
       ${LEASE_RELEASED}
     FROM a JOIN locked l ON l.account_id = a.account_id AND l.webhook_id = a.webhook_id AND l.position = a.position
     WHERE d.account_id = a.account_id AND d.webhook_id = a.webhook_id AND d.position = a.position AND d.lease_owner = a.owner
     RETURNING a.ord`;

/**
 * `recordAndClaimDeliveries` in one call, so one transaction: the attempts of `p_attempts` (JSON,
 * as `attemptsJson` makes it) recorded as recordAttempts records them, then the claim of
 * `formsink_claim_deliveries`, whose statements each take a fresh snapshot and so see the
 * outcomes (what they free is claimable) and lock endpoints and deliveries as a claim alone does.
 * The first row answers the record (`recorded`: the ordinals recorded, every other column null);
 * each row after it is a delivery claimed, as the claim answers it. Migration 8.
 */
const RECORD_AND_CLAIM = `CREATE FUNCTION formsink_record_and_claim_deliveries(p_attempts text, p_now bigint, p_limit integer, p_lease_until bigint,
    p_owner text, p_lock_timeout text)
  RETURNS TABLE (
    recorded integer[],
${CLAIMED_COLUMNS})
  LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  recorded_ordinals integer[];
BEGIN
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  WITH done AS (${ATTEMPTS_RECORDED("p_attempts::json")})
  SELECT COALESCE(array_agg(done.ord::integer), '{}') INTO recorded_ordinals FROM done;
  recorded := recorded_ordinals;
  RETURN NEXT;
  RETURN QUERY SELECT NULL::integer[], c.* FROM formsink_claim_deliveries(p_now, p_limit, p_lease_until, p_owner, p_lock_timeout) AS c;
END $$`;

/** Migration 8: outcomes and the next claim in one call (RECORD_AND_CLAIM). */
export const RECORD_AND_CLAIM_MIGRATION: readonly string[] = [RECORD_AND_CLAIM];

/**
 * The recording of outcomes as one call (`recordDeliveryAttempts` apart from a claim), migration
 * 9: ATTEMPTS_RECORDED as a function, so that it runs with KEY_PROBES_ONLY as the combined call does.
 */
const RECORD = `CREATE FUNCTION formsink_record_deliveries(p_attempts text) RETURNS SETOF bigint LANGUAGE sql AS $$
  WITH done AS (${ATTEMPTS_RECORDED("p_attempts::json")}) SELECT done.ord FROM done
$$`;

/**
 * A claim and a recording of outcomes lock and change the deliveries they name, each found by its
 * key: never a hash or merge join, which reads every delivery of the table. The planner chose one
 * for the recording's lock (it guesses a JSON array of outcomes holds a hundred, so reading the
 * table looked cheaper than as many probes while the table was small), and so each write of
 * outcomes read the whole history. A migration that replaces one of these functions names these
 * settings again: CREATE OR REPLACE drops those it does not name.
 */
const KEY_PROBES_ONLY = "SET enable_hashjoin = off SET enable_mergejoin = off";

/**
 * Migration 9. The index a retry finds its delivery by (`retryDelivery`) leads with the event's
 * id: as migration 2 made it, it led with the endpoint's (account, id) as the primary key does,
 * and a planner without statistics of the table (a new database, until autovacuum first analyzes
 * it) thought both found one row and took it for the probes of the claim's lease and of an
 * outcome's recording, which then read every delivery the endpoint ever had for each delivery
 * they locked. Led by the event's id it serves no probe by key; event ids begin with their time,
 * so an outcome's entry still goes to the end of the index. The claim, the combined call and the
 * recording apart from a claim run with KEY_PROBES_ONLY, and the claim skips what another holds
 * (CLAIM_SKIPPING_HELD).
 */
export const KEY_PROBE_MIGRATION: readonly string[] = [
  "DROP INDEX webhook_deliveries_by_event",
  "CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id, account_id, webhook_id)",
  `${CLAIM_SKIPPING_HELD} ${KEY_PROBES_ONLY}`,
  `ALTER FUNCTION formsink_record_and_claim_deliveries(text, bigint, integer, bigint, text, text) ${KEY_PROBES_ONLY}`,
  `${RECORD} ${KEY_PROBES_ONLY}`,
];

/** The attempts as the JSON array ATTEMPTS_RECORDED reads. */
function attemptsJson(attempts: readonly DeliveryAttempt[]): string {
  return JSON.stringify(attempts.map((a) => ({
    account_id: a.accountId, webhook_id: a.webhookId, position: a.position, owner: a.owner, at: a.at, duration_ms: a.durationMs,
    status_code: a.statusCode, error: a.error, status: a.status, next_attempt_at: a.status === "pending" ? a.nextAttemptAt : null,
  })));
}

/**
 * Which of `count` attempts were recorded, from the ordinals (from 1) of those that were: an
 * `integer[]`, which the driver gives as its text (`{1,12}`) when it has not read the server's
 * array types (index.ts: `fetch_types`), else as an array.
 */
function recordedOf(count: number, ordinals: unknown): boolean[] {
  const listed = typeof ordinals === "string" ? ordinals.slice(1, -1).split(",").filter((ordinal) => ordinal !== "") : [...(ordinals as Iterable<unknown>)];
  const recorded = new Set(listed.map(Number));
  return Array.from({ length: count }, (_, i) => recorded.has(i + 1));
}

/** Records each attempt and releases its lease, in one statement; true for those whose `owner` held the lease. */
async function recordAttempts(query: Query, attempts: readonly DeliveryAttempt[]): Promise<boolean[]> {
  const rows = await query("SELECT * FROM formsink_record_deliveries($1) AS ord", [attemptsJson(attempts)]);
  return recordedOf(attempts.length, rows.map((row) => row.ord));
}

function toClaimedDelivery(row: Record<string, unknown>): ClaimedDelivery {
  return {
    accountId: String(row.account_id),
    // The claim renames the endpoint's columns that an event's have too.
    webhook: toWebhook({ ...row, id: row.webhook_id, popup_id: row.w_popup_id, created_at: row.w_created_at }),
    position: Number(row.position),
    event: eventText(row as unknown as EventTextRow),
    eventId: String(row.event_id),
    eventType: String(row.event_type) as EventType,
    attempts: Number(row.attempts),
    firstAttemptAt: row.first_attempt_at === null ? null : Number(row.first_attempt_at),
  };
}
