/**
 * Webhook endpoints and their outbox in SQL (`WebhookStore`, migrations 8, 13, 20 and 22). The outbox is
 * the change log plus delivery state: a create writes nothing here. An endpoint's first attempts
 * are leased as a range of its log (the endpoint's own lease, up to `lease_last`), and a delivery
 * row is written once, with the outcome of its first attempt: the dispatcher's writes, which take
 * the write lock the creates' commits need, are one small update per endpoint a claim and one
 * insert per outcome. Retries, replays and a retry asked before a first attempt's outcome are
 * rows with leases of their own. Every method is one statement or one atomic batch, with no
 * interactive transaction (D1 and libSQL over HTTP have none): a batch is one write transaction
 * and SQLite has one writer, so two claims never lease one delivery.
 */
import type { EventType } from "../../events.ts";
import { randomHex } from "../../hex.ts";
import { ClaimAfterRecordingFailed, type ClaimedDelivery, type DeliveryAttempt, type WebhookChange, WebhookLimitReached, type WebhookStore } from "../../store.ts";
import { arrayRows, type SqlDriver, type SqlResult, type SqlStatement, type SqlValue } from "./driver.ts";
import { EVENT_JSON } from "./events.ts";
import { toDelivery, toWebhook, WEBHOOK_CHANGES } from "./records.ts";

/** The newest position of an endpoint's account's log (0 for an empty log). */
const NEWEST_POSITION = "COALESCE((SELECT MAX(account_position) FROM events WHERE events.account_id = webhooks.account_id), 0)";

/** True for an event of `events` the endpoint `endpoint` (a row of `webhooks`) subscribes to. */
const matches = (endpoint: string) => `(${endpoint}.types IS NULL OR events.type IN (SELECT value FROM json_each(${endpoint}.types)))
  AND (${endpoint}.popup_id IS NULL OR events.popup_id = ${endpoint}.popup_id)`;
const MATCHES = matches("webhooks");

/** The endpoint of `webhooks` holds no live lease on a range of its log at `?1`. */
const UNLEASED = "(webhooks.lease_until IS NULL OR webhooks.lease_until <= ?1)";

/** The last position of the log an endpoint has taken in: leased, recorded, or skipped. */
const FRONTIER = "MAX(webhooks.log_position, COALESCE(webhooks.lease_last, 0))";

/**
 * The event's id, read from its stored text. Every event's text starts with it (`{"id":"`, then
 * `evt_` and 32 hex digits, as events.ts writes them), so it is cut from there without parsing
 * the JSON, which the dispatcher's claims and outcome writes would do for every delivery. Any
 * other text is parsed: a created event keeps only the text before its data (see events.ts),
 * which a placeholder value completes.
 */
const EVENT_ID = `CASE WHEN substr(events.event, 1, 7) = '{"id":"' AND substr(events.event, 44, 1) = '"' THEN substr(events.event, 8, 36)
  ELSE json_extract(CASE WHEN events.type = 'submission.created' THEN events.event || 'null}' ELSE events.event END, '$.id') END`;

/**
 * What separates an event's fields, and its records, in a claim's read of its events (one
 * value for them all): control characters, which JSON text holds nowhere (escaped in strings,
 * and not whitespace), nor an event's id, type or position.
 */
const UNIT_SEPARATOR = "\x1f";
const RECORD_SEPARATOR = "\x1e";
const UNIT = "char(31)";
const RECORD = "char(30)";

/** The fields of an endpoint a claim reads (those `toWebhook` takes, and its number), as json_object's arguments. */
const ENDPOINT_FIELDS = ["endpoint", "account_id", "id", "url", "types", "popup_id", "description", "created_at", "disabled_at", "secrets",
  "previous_secret_expires_at", "failing_since"].map((column) => `'${column}', ${column}`).join(", ");

/** Beyond every position: what a bound is when nothing bounds it. */
const NO_POSITION = Number.MAX_SAFE_INTEGER;

/**
 * Of each endpoint, where its run of first attempts stops: the oldest never-attempted delivery
 * that is leased or not yet due at `?1`, which holds back the ones after it. Read from the
 * leases and the not-yet-due, both few: never the backlog.
 */
const HELD_BACK = `SELECT endpoint, MIN(position) AS stop FROM (
    SELECT endpoint, position FROM webhook_deliveries WHERE status = 'pending' AND attempts = 0 AND lease_until > ?1
    UNION ALL
    SELECT endpoint, position FROM webhook_deliveries WHERE status = 'pending' AND attempts = 0 AND next_attempt_at > ?1)
  GROUP BY endpoint`;

/**
 * Of each enabled endpoint, the position its run of first attempts stays below: where it is
 * held back, or past its `?2`-th never-attempted delivery (a claim takes at most `?2`),
 * whichever comes first. One bound, so that reading the run is one short range of the index.
 */
const RUNS = `SELECT webhooks.endpoint AS endpoint, MIN(
    COALESCE((SELECT stop FROM held_back WHERE held_back.endpoint = webhooks.endpoint), ${NO_POSITION}),
    COALESCE((SELECT position + 1 FROM webhook_deliveries WHERE endpoint = webhooks.endpoint
                AND status = 'pending' AND attempts = 0 ORDER BY position LIMIT 1 OFFSET ?2 - 1), ${NO_POSITION})) AS bound
  FROM webhooks WHERE disabled_at IS NULL AND ${UNLEASED}`;

/**
 * The deliveries a claim at `?1` leases, at most `?2`: each enabled endpoint's run of
 * never-attempted deliveries in commit order (so that started in the order given, first
 * attempts start in commit order), before due retries in order of first attempt
 * (so an endpoint that keeps failing does not hold up the others' new events). Every part
 * reads pending deliveries through a partial index, at most `?2` of each endpoint: never the
 * delivery history, nor a whole backlog.
 */
const CLAIMABLE = `WITH held_back AS (${HELD_BACK}), runs AS MATERIALIZED (${RUNS})
  SELECT id FROM (
    SELECT * FROM (
      SELECT webhook_deliveries.rowid AS id, 0 AS kind, 0 AS since, webhook_deliveries.position AS position
      FROM runs CROSS JOIN webhook_deliveries
        ON webhook_deliveries.endpoint = runs.endpoint
        AND webhook_deliveries.status = 'pending' AND webhook_deliveries.attempts = 0
        AND webhook_deliveries.position < runs.bound
      ORDER BY webhook_deliveries.position LIMIT ?2)
    UNION ALL
    SELECT * FROM (
      SELECT rowid AS id, 1 AS kind, first_attempt_at AS since, position FROM webhook_deliveries
      WHERE status = 'pending' AND attempts > 0 AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
        AND EXISTS (SELECT 1 FROM webhooks WHERE webhooks.endpoint = webhook_deliveries.endpoint AND webhooks.disabled_at IS NULL)
      ORDER BY first_attempt_at, position LIMIT ?2))
  ORDER BY kind, since, position LIMIT ?2`;

/**
 * True when a claim at `?1` may find work: an enabled endpoint without a live lease on its log
 * has events it has not taken in, or its oldest never-attempted delivery row is due and not
 * leased (a run starts there, and stops before any leased or not-yet-due one: when that one is
 * leased or not yet due, none of the endpoint's first attempts is claimable), or a retry is due
 * and not leased. So when this is false a claim would lease nothing: a read answers it without
 * the write lock, which creates need. Each endpoint's oldest is one step into the index by
 * position, where all due never-attempted deliveries would each be read to see their lease,
 * those in flight included.
 */
const CLAIMABLE_NOW = `EXISTS (SELECT 1 FROM webhooks WHERE disabled_at IS NULL AND ${UNLEASED} AND log_position < ${NEWEST_POSITION})
  OR EXISTS (SELECT 1 FROM webhooks CROSS JOIN webhook_deliveries ON webhook_deliveries.rowid = (
      SELECT rowid FROM webhook_deliveries WHERE endpoint = webhooks.endpoint AND status = 'pending' AND attempts = 0 ORDER BY position LIMIT 1)
    WHERE webhooks.disabled_at IS NULL AND ${UNLEASED} AND webhook_deliveries.next_attempt_at <= ?1
      AND (webhook_deliveries.lease_until IS NULL OR webhook_deliveries.lease_until <= ?1))
  OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND attempts > 0 AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1))`;
const MAYBE_CLAIMABLE = `SELECT ${CLAIMABLE_NOW} AS maybe`;

/**
 * Moves each enabled, unleased endpoint none of whose events after its place in the log it
 * subscribes to past them, so that those are not read again (and a claim's first read finds
 * nothing to do). A lease run out on such an endpoint (its events pruned) goes with it.
 */
const NOTHING_TO_TAKE = `UPDATE webhooks SET log_position = ${NEWEST_POSITION}, lease_owner = NULL, lease_until = NULL, lease_claim = NULL, lease_last = NULL
  WHERE disabled_at IS NULL AND ${UNLEASED} AND log_position < ${NEWEST_POSITION}
    AND NOT EXISTS (SELECT 1 FROM events WHERE events.account_id = webhooks.account_id AND events.account_position > webhooks.log_position AND ${MATCHES})`;

/**
 * The range leases a claim at `?1` takes (args as CLAIMABLE's leasing statement's): of each
 * enabled endpoint without a live lease on its log and without never-attempted delivery rows
 * (a replay's or a retry's, which go first), its next events after its place in the log, in
 * commit order across endpoints, as many as the claim has room for after the rows it leased
 * (`lease_claim = ?5`). Each endpoint leases through the last of its events taken. Each
 * endpoint's events are read up to its `?2`-th at most: never a whole backlog.
 */
const RANGES_LEASED = `UPDATE webhooks SET lease_owner = ?3, lease_until = ?4, lease_claim = ?5, lease_at = ?1, lease_last = taken.last
  FROM (
    WITH open AS MATERIALIZED (
      SELECT endpoint, account_id, log_position, types, popup_id,
        COALESCE((SELECT account_position FROM events WHERE events.account_id = webhooks.account_id AND events.account_position > webhooks.log_position
          AND ${MATCHES} ORDER BY account_position LIMIT 1 OFFSET ?2 - 1), ${NO_POSITION}) AS bound
      FROM webhooks WHERE disabled_at IS NULL AND ${UNLEASED} AND log_position < ${NEWEST_POSITION}
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE endpoint = webhooks.endpoint AND status = 'pending' AND attempts = 0))
    SELECT endpoint, MAX(position) AS last FROM (
      SELECT open.endpoint AS endpoint, events.account_position AS position
      FROM open CROSS JOIN events ON events.account_id = open.account_id AND events.account_position > open.log_position
        AND events.account_position <= open.bound
      WHERE ${matches("open")}
      ORDER BY events.position, open.endpoint
      LIMIT ?2 - (SELECT COUNT(*) FROM webhook_deliveries WHERE lease_until = ?4 AND lease_claim = ?5))
    GROUP BY endpoint) AS taken
  WHERE webhooks.endpoint = taken.endpoint`;

/**
 * The events of the first attempts an endpoint's range lease covers, as a FROM and WHERE of
 * `webhooks` and `events`: its events after its place in the log through `lease_last` that it
 * subscribes to, and that have no delivery row (a retry asked meanwhile made one, which goes its
 * own way).
 */
const RANGE_EVENTS = `FROM webhooks JOIN events ON events.account_id = webhooks.account_id AND events.account_position > webhooks.log_position
    AND events.account_position <= webhooks.lease_last
  WHERE ${MATCHES} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE webhook_deliveries.endpoint = webhooks.endpoint
    AND webhook_deliveries.position = events.account_position)`;

/** The first attempts an endpoint's range lease covers (RANGE_EVENTS), as rows of `webhook_deliveries` read. */
const RANGE_DELIVERIES = `SELECT webhooks.endpoint AS endpoint, events.account_position AS position, ${EVENT_ID} AS event_id,
    events.type AS event_type, 'pending' AS status, 0 AS attempts, NULL AS first_attempt_at, NULL AS last_attempt_at,
    webhooks.lease_at AS next_attempt_at, NULL AS last_status_code, NULL AS last_error, NULL AS last_duration_ms
  ${RANGE_EVENTS}`;

/**
 * Deletes the deliveries of the events at or before their account's newest position pruned
 * (for `pruneEvents`): endpoint by endpoint along the index by position (the CROSS JOINs fix
 * that order), so the history is not scanned.
 */
export const DELIVERIES_OF_PRUNED_EVENTS = `DELETE FROM webhook_deliveries WHERE rowid IN (
    SELECT webhook_deliveries.rowid FROM webhooks CROSS JOIN event_horizons ON event_horizons.account_id = webhooks.account_id
      CROSS JOIN webhook_deliveries ON webhook_deliveries.endpoint = webhooks.endpoint AND webhook_deliveries.position <= event_horizons.pruned_through)`;

/**
 * `write` runs the dispatcher's writes (claims and outcomes): the store's group commit, so that
 * they share commits with one another and with creates instead of paying for one each.
 */
export function sqlWebhookStore(driver: SqlDriver, write: (statements: readonly SqlStatement[]) => Promise<SqlResult[]>): WebhookStore {
  /**
   * The deliveries leased until `leasedUntil` by the claim `claim`, read after its commit, not
   * inside it: building each event's text is much of a claim's work, and the write lock is the
   * creates' too. The claim's leases keep these deliveries this dispatcher's meanwhile. Each
   * event's text is built once and each endpoint read once, however many of the claim's
   * deliveries share them (an event goes to every endpoint).
   *
   * The deliveries, the endpoints and the events each come as one value (a JSON array; the
   * events' records joined by separators), not as a row each: the libSQL binding costs about a
   * microsecond per value it hands over, more than SQLite's work per delivery
   * (bench/webhooks.ts). A delivery names its endpoint by number, its event by its position in
   * the account's log and by its place among every account's events (`events.position`, which
   * the events' records are keyed by and first attempts are ordered by); an event's id and type
   * come with its text.
   */
  async function readClaim(leasedUntil: number, claim: string): Promise<ClaimedDelivery[]> {
    const ROWS_LEASED = "SELECT endpoint, position FROM webhook_deliveries WHERE lease_until = ?1 AND lease_claim = ?2";
    const OF_CLAIM = "AND webhooks.lease_until = ?1 AND webhooks.lease_claim = ?2";
    // A delivery row names its event by its account's position.
    const ROWS_LEASED_EVENTS = `FROM webhook_deliveries JOIN webhooks ON webhooks.endpoint = webhook_deliveries.endpoint
      JOIN events ON events.account_id = webhooks.account_id AND events.account_position = webhook_deliveries.position
      WHERE webhook_deliveries.lease_until = ?1 AND webhook_deliveries.lease_claim = ?2`;
    const leased = [leasedUntil, claim];
    const [deliveries, endpoints, texts] = await driver.batch(
      [
        {
          sql: `SELECT json_group_array(json_array(endpoint, position, attempts, first_attempt_at, event)) FROM (
                  SELECT webhook_deliveries.endpoint AS endpoint, webhook_deliveries.position AS position, webhook_deliveries.attempts AS attempts,
                    webhook_deliveries.first_attempt_at AS first_attempt_at, events.position AS event ${ROWS_LEASED_EVENTS}
                  UNION ALL
                  SELECT webhooks.endpoint, events.account_position, 0, NULL, events.position ${RANGE_EVENTS} ${OF_CLAIM})`,
          args: leased,
          asArrays: true,
        },
        {
          sql: `SELECT json_group_array(json_object(${ENDPOINT_FIELDS})) FROM webhooks WHERE (lease_until = ?1 AND lease_claim = ?2)
                  OR endpoint IN (SELECT endpoint FROM (${ROWS_LEASED}))`,
          args: leased,
          asArrays: true,
        },
        {
          sql: `SELECT group_concat(events.position || ${UNIT} || COALESCE(${EVENT_ID}, 'null') || ${UNIT} || events.type || ${UNIT} || COALESCE(${EVENT_JSON}, 'null'), ${RECORD})
                FROM events
                WHERE events.position IN (SELECT events.position ${ROWS_LEASED_EVENTS} UNION ALL SELECT events.position ${RANGE_EVENTS} ${OF_CLAIM})`,
          args: leased,
          asArrays: true,
        },
      ],
      "read",
    );
    const webhooks = new Map(
      jsonList<Record<string, unknown>>(endpoints!).map((row) => [Number(row.endpoint), { accountId: String(row.account_id), webhook: toWebhook(row) }]),
    );
    const events = new Map<number, { id: string; type: EventType; text: string }>();
    const eventRecords = arrayRows(texts!)[0]?.[0];
    for (const record of eventRecords == null ? [] : String(eventRecords).split(RECORD_SEPARATOR)) {
      const [position, id, type, text] = record.split(UNIT_SEPARATOR, 4) as [string, string, string, string];
      events.set(Number(position), { id, type: type as EventType, text: record.slice(position.length + id.length + type.length + 3) });
    }
    const claimed: { delivery: ClaimedDelivery; order: number }[] = [];
    for (const [endpoint, position, attempts, firstAttemptAt, order] of jsonList<[number, number, number, number | null, number]>(deliveries!)) {
      const of = webhooks.get(endpoint);
      const event = events.get(order);
      // Both are there: an endpoint's deletion and an event's pruning delete its deliveries, leased or not, in the same transaction.
      if (of === undefined || event === undefined) continue;
      const delivery = {
        accountId: of.accountId, webhook: of.webhook, position, event: event.text, eventId: event.id, eventType: event.type, attempts, firstAttemptAt,
      };
      claimed.push({ delivery, order });
    }
    // Retries after first attempts; first attempts in commit order (of every account's events), retries in order of first attempt.
    return claimed.sort(({ delivery: a, order: x }, { delivery: b, order: y }) =>
      Number(a.attempts > 0) - Number(b.attempts > 0) || (a.firstAttemptAt ?? 0) - (b.firstAttemptAt ?? 0) || x - y
    ).map(({ delivery }) => delivery);
  }

  return {
    async insertWebhook(accountId, webhook, most) {
      // One statement, so the count and the insert are one write: SQLite has one writer at a time.
      const { rows } = await driver.execute({
        sql: `INSERT INTO webhooks (account_id, id, url, types, popup_id, description, created_at, disabled_at, secrets, previous_secret_expires_at,
                failing_since, log_position)
              SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, COALESCE((SELECT MAX(account_position) FROM events WHERE account_id = ?1), 0)
              WHERE (SELECT COUNT(*) FROM webhooks WHERE account_id = ?1) < ?12
              RETURNING 1 AS inserted`,
        args: [
          accountId, webhook.webhookId, webhook.url, WEBHOOK_CHANGES.types.write(webhook.types), webhook.popupId, webhook.description,
          webhook.createdAt, webhook.disabledAt, JSON.stringify(webhook.secrets), webhook.previousSecretExpiresAt, webhook.failingSince,
          most ?? Number.MAX_SAFE_INTEGER,
        ],
      });
      if (rows.length === 0) throw new WebhookLimitReached();
    },
    async getWebhook(accountId, webhookId) {
      const { rows } = await driver.execute({ sql: "SELECT * FROM webhooks WHERE account_id = ? AND id = ?", args: [accountId, webhookId] });
      return rows[0] && toWebhook(rows[0]);
    },
    async listWebhooks(accountId) {
      const { rows } = await driver.execute({
        sql: "SELECT * FROM webhooks WHERE account_id = ? ORDER BY created_at, rowid",
        args: [accountId],
      });
      return rows.map(toWebhook);
    },
    async updateWebhook(accountId, webhookId, change) {
      const assignments: string[] = [];
      const args: SqlValue[] = [];
      for (const key of Object.keys(WEBHOOK_CHANGES) as (keyof WebhookChange)[]) {
        if (change[key] === undefined) continue;
        const field = WEBHOOK_CHANGES[key] as { column: string; write: (value: unknown) => SqlValue };
        assignments.push(`${field.column} = ?`);
        args.push(field.write(change[key]));
      }
      // Enabled again, it takes the events from now on: what came while it was disabled is skipped.
      if (change.disabledAt === null) assignments.push(`log_position = CASE WHEN disabled_at IS NULL THEN log_position ELSE ${NEWEST_POSITION} END`);
      const { rows } = await driver.execute({
        sql: `UPDATE webhooks SET ${assignments.join(", ") || "id = id"} WHERE account_id = ? AND id = ? RETURNING *`,
        args: [...args, accountId, webhookId],
      });
      return rows[0] && toWebhook(rows[0]);
    },
    async deleteWebhook(accountId, webhookId) {
      const [, deleted] = await driver.batch(
        [
          { sql: `DELETE FROM webhook_deliveries WHERE endpoint = (${endpointNumber()})`, args: [accountId, webhookId] },
          // RETURNING, not rowsAffected: D1 counts the rows of triggers too.
          { sql: "DELETE FROM webhooks WHERE account_id = ? AND id = ? RETURNING 1 AS deleted", args: [accountId, webhookId] },
        ],
        "write",
      );
      return deleted!.rows.length > 0;
    },

    async claimDeliveries({ now, limit, leaseMs, owner }) {
      const { rows: found } = await driver.execute({ sql: MAYBE_CLAIMABLE, args: [now] });
      if (!found[0]?.maybe) return [];
      const claim = randomHex(16);
      await write(leasesTaken(now, limit, owner, now + leaseMs, claim));
      return readClaim(now + leaseMs, claim);
    },
    async recordAndClaimDeliveries(attempts, { now, limit, leaseMs, owner }) {
      // What the outcomes free (an endpoint's range, once its run is recorded) is claimable only
      // after them: the claim follows them in this same transaction. No read first of whether it
      // may find anything (as a claim alone does): the dispatcher claims with its outcomes when
      // its runs are done, under a stream of changes there is then always something, and that
      // read was a transaction of its own per write (bench/webhooks.ts, the dispatcher's CPU).
      const claim = randomHex(16);
      const recorded = await attemptsRecordedAlone(write, attempts, leasesTaken(now, limit, owner, now + leaseMs, claim));
      try {
        return { recorded, claimed: await readClaim(now + leaseMs, claim) };
      } catch (error) {
        // Committed: the outcomes stand, and what follows them must happen; the leases run out.
        throw new ClaimAfterRecordingFailed(recorded, error);
      }
    },
    async recordDeliveryAttempt(attempt) {
      const [recorded] = await attemptsRecordedAlone(write, [attempt]);
      return recorded!;
    },
    recordDeliveryAttempts: (attempts) => attemptsRecordedAlone(write, attempts),
    async listDeliveries(accountId, webhookId, query) {
      // The first attempts of a leased range have no row yet: listed as pending, due when leased.
      const statusFilter = query.status === undefined ? "" : "AND status = ?4";
      const { rows } = await driver.execute({
        sql: `SELECT * FROM (
                SELECT position, event_id, event_type, status, attempts, last_attempt_at, next_attempt_at, last_status_code, last_error,
                  last_duration_ms
                FROM webhook_deliveries WHERE endpoint = (${endpointNumber()}) AND position < ?3 ${statusFilter}
                UNION ALL
                SELECT position, event_id, event_type, status, attempts, last_attempt_at, next_attempt_at, last_status_code, last_error,
                  last_duration_ms
                FROM (${RANGE_DELIVERIES} AND webhooks.account_id = ?1 AND webhooks.id = ?2 AND webhooks.lease_owner IS NOT NULL)
                WHERE position < ?3 ${statusFilter})
              ORDER BY position DESC LIMIT ?5`,
        args: [accountId, webhookId, query.after ?? Number.MAX_SAFE_INTEGER, query.status ?? null, query.limit + 1],
      });
      const deliveries = rows.slice(0, query.limit).map(toDelivery);
      return { deliveries, cursor: rows.length > query.limit ? deliveries.at(-1)!.position : null };
    },
    async retryDelivery(accountId, webhookId, eventId, now) {
      // A first attempt in flight has no row: the retry makes it one, which its outcome then
      // leaves alone (the insert of an outcome never overwrites a row). A row is found by its
      // event's id (the index of migration 17), among that event's deliveries to every endpoint.
      const [updated, inserted] = await driver.batch(
        [
          {
            sql: `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?1, ${LEASE_RELEASED}
                  WHERE endpoint = (${endpointNumber("?2", "?3")}) AND event_id = ?4 RETURNING 1 AS retried`,
            args: [now, accountId, webhookId, eventId],
          },
          {
            sql: `INSERT INTO webhook_deliveries (endpoint, position, event_id, event_type, status, attempts, next_attempt_at)
                  SELECT endpoint, position, event_id, event_type, 'pending', 0, ?1 FROM (${RANGE_DELIVERIES}
                    AND webhooks.account_id = ?2 AND webhooks.id = ?3 AND webhooks.lease_owner IS NOT NULL)
                  WHERE event_id = ?4
                  ON CONFLICT (endpoint, position) DO NOTHING
                  RETURNING 1 AS retried`,
            args: [now, accountId, webhookId, eventId],
          },
        ],
        "write",
      );
      return updated!.rows.length + inserted!.rows.length > 0;
    },
    async hasEnabledWebhooks() {
      const { rows } = await driver.execute({ sql: "SELECT EXISTS (SELECT 1 FROM webhooks WHERE disabled_at IS NULL) AS enabled", args: [] });
      return Number(rows[0]!.enabled) === 1;
    },
    async replayDeliveries(accountId, webhookId, since, now) {
      // The events after what an enabled endpoint has taken in are first attempts to come
      // already: counted, and left to its range leases. A disabled endpoint takes nothing in
      // (enabled again, it skips what came meanwhile), so its replay makes rows of them all.
      const upTo = `CASE WHEN webhooks.disabled_at IS NULL THEN ${FRONTIER} ELSE ${NO_POSITION} END`;
      const [replayed, coming] = await driver.batch(
        [
          {
            sql: `INSERT INTO webhook_deliveries (endpoint, position, event_id, event_type, status, attempts, next_attempt_at)
                  SELECT webhooks.endpoint, events.account_position, ${EVENT_ID}, events.type, 'pending', 0, ?
                  FROM webhooks JOIN events ON events.account_id = webhooks.account_id AND events.account_position <= ${upTo}
                  WHERE webhooks.account_id = ? AND webhooks.id = ? AND events.at >= ? AND ${MATCHES}
                  ON CONFLICT (endpoint, position) DO UPDATE SET status = 'pending', next_attempt_at = excluded.next_attempt_at, ${LEASE_RELEASED}
                  RETURNING 1 AS replayed`,
            args: [now, accountId, webhookId, since],
          },
          {
            sql: `SELECT COUNT(*) AS coming FROM webhooks JOIN events ON events.account_id = webhooks.account_id AND events.account_position > ${upTo}
                  WHERE webhooks.account_id = ? AND webhooks.id = ? AND events.at >= ? AND ${MATCHES}`,
            args: [accountId, webhookId, since],
          },
        ],
        "write",
      );
      return replayed!.rows.length + Number(coming!.rows[0]?.coming ?? 0);
    },
  };
}

const LEASE_RELEASED = "lease_owner = NULL, lease_until = NULL, lease_claim = NULL";

/** The number of the endpoint whose account and id are the arguments `account` and `id`: what its delivery rows name it by. */
const endpointNumber = (account = "?1", id = "?2") => `SELECT endpoint FROM webhooks WHERE account_id = ${account} AND id = ${id}`;

/**
 * The statements of a claim at `now` (CLAIMABLE's and RANGES_LEASED's arguments): endpoints with
 * nothing to take moved on, then due delivery rows leased, then ranges of the log.
 */
function leasesTaken(now: number, limit: number, owner: string, leaseUntil: number, claim: string): SqlStatement[] {
  const args = [now, limit, owner, leaseUntil, claim];
  return [
    { sql: NOTHING_TO_TAKE, args: [now] },
    { sql: `UPDATE webhook_deliveries SET lease_owner = ?3, lease_until = ?4, lease_claim = ?5 WHERE rowid IN (${CLAIMABLE})`, args },
    { sql: RANGES_LEASED, args },
  ];
}

/**
 * Records attempts, each answered as alone (true when its owner held its lease), in one write
 * with `after` (a claim) after them. The first try records them only if every one of them is
 * recorded, failing the whole write otherwise (NOT_RECORDED), so that its answer is "all"
 * without a row read back per attempt (RETURNING): the dispatcher's usual write, whose
 * statements hold the write lock the creates need and whose CPU shares a core with them
 * (bench/webhooks.ts; bench/support/outbox-lock.ts measures it alone). Only when it fails so (a
 * lease lost, an endpoint deleted: rare) does a second write answer each attempt by the rows it
 * recorded.
 */
async function attemptsRecordedAlone(
  write: (statements: readonly SqlStatement[]) => Promise<SqlResult[]>,
  attempts: readonly DeliveryAttempt[],
  after: readonly SqlStatement[] = [],
): Promise<boolean[]> {
  if (attempts.length === 0 && after.length === 0) return [];
  try {
    await write([...attemptsRecording(attempts, "all").statements, ...after]);
    return attempts.map(() => true);
  } catch (error) {
    if (!notAllRecorded(error)) throw error;
  }
  const recording = attemptsRecording(attempts, "each");
  return recording.recorded(await write([...recording.statements, ...after]));
}

/** What NOT_RECORDED makes SQLite say, as the message of the error (and of its causes) that a driver reports. */
const NOT_RECORDED_MARK = "formsink: an attempt not recorded";

/**
 * An expression that fails the statement (and the write it is in) when evaluated: SQLite has no
 * RAISE outside triggers, and a JSON path it cannot read is an error that names it.
 */
const NOT_RECORDED = `json_extract('{}', '${NOT_RECORDED_MARK}')`;

/** True when `error` is a write failed by NOT_RECORDED. */
function notAllRecorded(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (cause.message.includes(NOT_RECORDED_MARK)) return true;
  return false;
}

/**
 * The statements that record attempts, to run in one write, and what each attempt is from their
 * results (the first results of the write): a statement per endpoint, owner and kind of outcome
 * (a statement each costs more than its row does), then one per endpoint and owner moving the
 * endpoint's place in the log past the first attempts recorded, once all of them are.
 */
function attemptsRecording(
  attempts: readonly DeliveryAttempt[],
  answer: Answer,
): { statements: SqlStatement[]; recorded: (results: readonly SqlResult[]) => boolean[] } {
  const groups = new Map<string, DeliveryAttempt[]>();
  /** Per endpoint and owner, the positions attempted. */
  const attempted = new Map<string, { attempt: DeliveryAttempt; positions: number[] }>();
  for (const attempt of attempts) {
    // Successes with one status code apart: most of a run's outcomes, each written from three numbers.
    const outcome = attempt.status === "succeeded" ? attempt.statusCode : "other";
    const key = `${attempt.accountId}\n${attempt.webhookId}\n${attempt.owner}\n${outcome}`;
    const group = groups.get(key);
    if (group) group.push(attempt);
    else groups.set(key, [attempt]);
    const leaseKey = `${attempt.accountId}\n${attempt.webhookId}\n${attempt.owner}`;
    const ofLease = attempted.get(leaseKey);
    if (ofLease) ofLease.positions.push(attempt.position);
    else attempted.set(leaseKey, { attempt, positions: [attempt.position] });
  }
  const statements = [
    ...[...groups.values()].map((group) => attemptsRecorded(group, answer)),
    ...[...attempted.values()].map(({ attempt, positions }) => rangeMovedOn(attempt.accountId, attempt.webhookId, attempt.owner, positions)),
  ];
  const recorded = (results: readonly SqlResult[]) => {
    const done = new Set<string>();
    [...groups.values()].forEach((group, i) => {
      for (const row of results[i]!.rows) done.add(deliveryKey(group[0]!.accountId, group[0]!.webhookId, Number(row.position)));
    });
    return attempts.map((attempt) => done.has(deliveryKey(attempt.accountId, attempt.webhookId, attempt.position)));
  };
  return { statements, recorded };
}

/**
 * How a write of outcomes answers its attempts: "each", a row read back per attempt recorded
 * (RETURNING); "all", nothing read back, the write failing unless every attempt is recorded.
 */
type Answer = "each" | "all";

/**
 * Records several attempts of one endpoint by one owner in one statement: an attempt on a
 * delivery row (a retry, a replay: before the endpoint's place in the log, which moves only past
 * rows) updates it when `owner` held its lease; a first attempt of the endpoint's range lease,
 * held by `owner`, inserts its row with its outcome, unless a row is there already (a retry
 * asked meanwhile made one, and wins). Answered per `answer`: a row per delivery recorded, or
 * none and the statement failed (NOT_RECORDED) by the first attempt it would not record, which
 * the LEFT JOINs keep as a row to fail on. The endpoint and the owner are bound once, and each
 * attempt's outcome is a short JSON array, each of whose fields SQLite reads by parsing it again:
 * for successes with one status code (given so), only where, when and how long. The LIMIT keeps
 * the attempts a table of their own, read first, each finding its delivery by the unique key:
 * with the endpoint bound as a constant, SQLite walks the endpoint's delivery history instead.
 */
function attemptsRecorded(attempts: readonly DeliveryAttempt[], answer: Answer): SqlStatement {
  const { accountId, webhookId, owner, status, statusCode } = attempts[0]!;
  const succeeded = status === "succeeded" && attempts.every((attempt) => attempt.status === "succeeded" && attempt.statusCode === statusCode);
  const [fields, rows] = succeeded
    ? [
      `value ->> 0 AS position, 'succeeded' AS status, value ->> 1 AS at, NULL AS next_attempt_at, ?5 AS status_code, NULL AS error,
       value ->> 2 AS duration_ms`,
      attempts.map((attempt) => [attempt.position, attempt.at, attempt.durationMs]),
    ]
    : [
      `value ->> 0 AS position, value ->> 1 AS status, value ->> 2 AS at, value ->> 3 AS next_attempt_at, value ->> 4 AS status_code,
       value ->> 5 AS error, value ->> 6 AS duration_ms`,
      attempts.map((attempt) => [
        attempt.position, attempt.status, attempt.at, attempt.status === "pending" ? attempt.nextAttemptAt : null, attempt.statusCode,
        attempt.error, attempt.durationMs,
      ]),
    ];
  const leased = "(made.position <= webhooks.log_position OR (webhooks.lease_owner = ?3 AND made.position <= webhooks.lease_last))";
  const [position, from, where, updated, returning] = answer === "each"
    ? [
      "made.position",
      `JOIN webhooks ON webhooks.account_id = made.account_id AND webhooks.id = made.webhook_id
       JOIN events ON events.account_id = made.account_id AND events.account_position = made.position`,
      leased,
      "webhook_deliveries.lease_owner = ?3",
      "RETURNING position",
    ]
    : [
      `CASE WHEN events.position IS NOT NULL AND ${leased} THEN made.position ELSE ${NOT_RECORDED} END`,
      `LEFT JOIN webhooks ON webhooks.account_id = made.account_id AND webhooks.id = made.webhook_id
       LEFT JOIN events ON events.account_id = made.account_id AND events.account_position = made.position`,
      "true",
      `CASE WHEN webhook_deliveries.lease_owner = ?3 THEN 1 ELSE ${NOT_RECORDED} END`,
      "",
    ];
  return {
    sql: `INSERT INTO webhook_deliveries (endpoint, position, event_id, event_type, status, attempts, first_attempt_at,
            last_attempt_at, next_attempt_at, last_status_code, last_error, last_duration_ms)
          SELECT webhooks.endpoint, ${position}, ${EVENT_ID}, events.type, made.status, 1, made.at, made.at,
            made.next_attempt_at, made.status_code, made.error, made.duration_ms
          FROM (SELECT ?1 AS account_id, ?2 AS webhook_id, ${fields} FROM json_each(?4) LIMIT -1) AS made
            ${from}
          WHERE ${where}
          ON CONFLICT (endpoint, position) DO UPDATE SET
            status = excluded.status, attempts = attempts + 1, first_attempt_at = COALESCE(first_attempt_at, excluded.first_attempt_at),
            last_attempt_at = excluded.last_attempt_at, next_attempt_at = excluded.next_attempt_at, last_status_code = excluded.last_status_code,
            last_error = excluded.last_error, last_duration_ms = excluded.last_duration_ms, ${LEASE_RELEASED}
          WHERE ${updated}
          ${returning}`,
    args: succeeded ? [accountId, webhookId, owner, JSON.stringify(rows), statusCode] : [accountId, webhookId, owner, JSON.stringify(rows)],
  };
}

/**
 * Moves an endpoint's place in the log on to the newest of `positions` (an endpoint's attempts
 * by one owner, recorded in the same write), while that owner holds its range lease, and
 * releases the lease with the last of the range. Only when no event of the range before the
 * first of them (past the place) lacks a row: the outcomes of an endpoint's first attempts are
 * written in commit order (the dispatcher holds one answered early until those before it are
 * in), so such an event is one whose write failed, and moving past it would skip it for good.
 * The lease then runs out and the range is claimed again from there.
 * The check is one step into the log's index when nothing is missing.
 */
function rangeMovedOn(accountId: string, webhookId: string, owner: string, positions: readonly number[]): SqlStatement {
  const first = "(SELECT MIN(value) FROM json_each(?4) WHERE value > webhooks.log_position)";
  return {
    sql: `UPDATE webhooks SET log_position = MIN(?5, lease_last),
            lease_owner = CASE WHEN ?5 >= lease_last THEN NULL ELSE lease_owner END,
            lease_until = CASE WHEN ?5 >= lease_last THEN NULL ELSE lease_until END,
            lease_claim = CASE WHEN ?5 >= lease_last THEN NULL ELSE lease_claim END,
            lease_last = CASE WHEN ?5 >= lease_last THEN NULL ELSE lease_last END
          WHERE account_id = ?1 AND id = ?2 AND lease_owner = ?3 AND ?5 > log_position
            AND NOT EXISTS (SELECT 1 FROM events WHERE events.account_id = webhooks.account_id
              AND events.account_position > webhooks.log_position AND events.account_position < ${first} AND ${MATCHES}
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE webhook_deliveries.endpoint = webhooks.endpoint
                              AND webhook_deliveries.position = events.account_position))`,
    args: [accountId, webhookId, owner, JSON.stringify(positions), Math.max(...positions)],
  };
}

const deliveryKey = (accountId: string, webhookId: string, position: number) => `${accountId}\n${webhookId}\n${position}`;

/** The list a statement read as one JSON array (json_group_array), empty when it read none. */
function jsonList<T>(result: SqlResult): T[] {
  const list = arrayRows(result)[0]?.[0];
  return list == null ? [] : (JSON.parse(String(list)) as T[]);
}
