/**
 * The PostgreSQL schema, versioned as the SQLite one is (its own numbering: the two schemas are
 * not the same SQL). A migration is never edited once released: a change is a new entry.
 *
 * `migratePostgres` runs every pending migration in one statement that first takes a
 * transaction-level advisory lock, so of several servers starting at once one upgrades and the
 * others wait and then find the work done; DDL is transactional in PostgreSQL, so a failed upgrade
 * leaves the version it started from. A transaction-level lock, not a session one, so that it
 * works behind a transaction-mode pooler.
 *
 * Every text column that is compared or sorted is `COLLATE "C"`: the contract orders by code
 * point, whatever the database's default collation.
 */
import type postgres from "postgres";
import { randomHex } from "../../hex.ts";
import type { SchemaUpgrade } from "../sql/migrate.ts";
import { CLAIM_MIGRATION, KEY_PROBE_MIGRATION, RECORD_AND_CLAIM_MIGRATION, WEBHOOK_LIMIT_MIGRATION, WEBHOOK_MIGRATION } from "./webhooks.ts";
import { COUNTING_MIGRATION, IMPORT_MIGRATION, INSERT_MIGRATION, PROBE_MIGRATION, WRITE_FUNCTIONS } from "./writes.ts";

export type { SchemaUpgrade };

/** Arbitrary, fixed: the advisory lock key every formsink migration takes (in ASCII, "fsmigrat"). */
const MIGRATION_LOCK = "7379823299385762164";

const TEXT = 'text COLLATE "C"';

export const POSTGRES_MIGRATIONS: readonly (readonly string[])[] = [
  // 1: the whole schema of formsink's SQLite version 6, in one step.
  [
    `CREATE TABLE accounts (
      id ${TEXT} PRIMARY KEY,
      name ${TEXT} NOT NULL UNIQUE,
      created_at ${TEXT} NOT NULL
    )`,
    `CREATE TABLE api_keys (
      id ${TEXT} PRIMARY KEY,
      account_id ${TEXT} NOT NULL REFERENCES accounts (id),
      kind ${TEXT} NOT NULL CHECK (kind IN ('secret', 'publishable')),
      hash ${TEXT} NOT NULL,
      domains ${TEXT} NOT NULL, -- JSON array
      created_at ${TEXT} NOT NULL,
      revoked_at ${TEXT}
    )`,
    `CREATE INDEX api_keys_by_account ON api_keys (account_id)`,
    `CREATE TABLE submissions (
      account_id ${TEXT} NOT NULL,
      id ${TEXT} NOT NULL,
      popup_id ${TEXT} NOT NULL,
      domain ${TEXT} NOT NULL,
      device ${TEXT} NOT NULL,
      user_agent ${TEXT} NOT NULL,
      status ${TEXT} NOT NULL CHECK (status IN ('pending', 'completed')),
      created_at bigint NOT NULL, -- epoch milliseconds
      data ${TEXT} NOT NULL,       -- the JSON object as JSON.stringify wrote it (json or jsonb would reorder or re-space it)
      PRIMARY KEY (account_id, id)
    )`,
    // One index per equality filter, each ending in the list order (created_at, id): the
    // planner picks the one whose prefix a filter fixes, so a list or a walk reads the matching
    // rows in order, however few there are among millions. A combined filter starts from one of
    // them and checks the rest on the rows in that range. (An index per pair of filters would
    // make a rare pair flat too, but every index is written by every insert: bulk imports would
    // pay for all of them.)
    `CREATE INDEX submissions_by_time ON submissions (account_id, created_at, id)`,
    ...["popup_id", "domain", "device", "status"].map((column) => `CREATE INDEX submissions_by_${column} ON submissions (account_id, ${column}, created_at, id)`),

    // Maintained totals: one count per (account, popup, domain, device, status) that holds rows,
    // kept by statement-level triggers in the transaction of every insert, delete and status
    // change (one upsert per group a statement touches, so a bulk import pays per group, not
    // per row). Groups are upserted in key order, so two transactions never take them in
    // opposite orders.
    `CREATE TABLE submission_counts (
      account_id ${TEXT} NOT NULL,
      popup_id ${TEXT} NOT NULL,
      domain ${TEXT} NOT NULL,
      device ${TEXT} NOT NULL,
      status ${TEXT} NOT NULL,
      n bigint NOT NULL,
      PRIMARY KEY (account_id, popup_id, domain, device, status)
    )`,
    `CREATE FUNCTION formsink_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO submission_counts AS c (account_id, popup_id, domain, device, status, n)
          SELECT account_id, popup_id, domain, device, status, -COUNT(*) FROM old_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
          ON CONFLICT (account_id, popup_id, domain, device, status) DO UPDATE SET n = c.n + excluded.n;
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO submission_counts AS c (account_id, popup_id, domain, device, status, n)
          SELECT account_id, popup_id, domain, device, status, COUNT(*) FROM new_rows GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
          ON CONFLICT (account_id, popup_id, domain, device, status) DO UPDATE SET n = c.n + excluded.n;
      END IF;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER submissions_counted_on_insert AFTER INSERT ON submissions
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION formsink_count_rows()`,
    `CREATE TRIGGER submissions_counted_on_delete AFTER DELETE ON submissions
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION formsink_count_rows()`,
    `CREATE TRIGGER submissions_counted_on_update AFTER UPDATE ON submissions
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION formsink_count_rows()`,

    `CREATE TABLE idempotency_keys (
      account_id ${TEXT} NOT NULL,
      idempotency_key ${TEXT} NOT NULL,
      fingerprint ${TEXT} NOT NULL,
      submission_id ${TEXT} NOT NULL,
      submission ${TEXT} NOT NULL, -- the submission as first stored, JSON: what a retry gets back
      expires_at bigint NOT NULL,  -- epoch milliseconds
      PRIMARY KEY (account_id, idempotency_key)
    )`,
    // A create drops its account's expired records on the way.
    `CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (account_id, expires_at)`,
    `CREATE INDEX idempotency_keys_by_submission ON idempotency_keys (account_id, submission_id)`,
    `CREATE TABLE rate_limit_counters (
      bucket ${TEXT} PRIMARY KEY,
      window_start bigint NOT NULL,
      window_end bigint NOT NULL,
      hits bigint NOT NULL
    )`,
    `CREATE INDEX rate_limit_counters_by_end ON rate_limit_counters (window_end)`,
    // The data keys each popup's submissions have used: the columns of a CSV export, without
    // reading every row. Never shrunk: a superset costs at most an empty column.
    `CREATE TABLE submission_data_keys (
      account_id ${TEXT} NOT NULL,
      popup_id ${TEXT} NOT NULL,
      key ${TEXT} NOT NULL,
      PRIMARY KEY (account_id, popup_id, key)
    )`,

    // Privacy: the identifying-field index (an email kept with its ASCII letters lower-cased, as
    // every store compares it), erasure receipts, retention rules, the deployment's settings.
    `CREATE TABLE identifying_fields (field ${TEXT} PRIMARY KEY)`,
    `INSERT INTO identifying_fields (field) VALUES ('email')`,
    `CREATE TABLE submission_identifiers (
      account_id ${TEXT} NOT NULL,
      field ${TEXT} NOT NULL,
      value_key ${TEXT} NOT NULL,
      submission_id ${TEXT} NOT NULL,
      PRIMARY KEY (account_id, field, value_key, submission_id)
    )`,
    // What an identifying value is compared by (identifierKey in src/store.ts): an email with
    // its ASCII letters lower-cased, any other field as it is.
    `CREATE FUNCTION formsink_identifier_key(field text, value text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE field WHEN 'email' THEN translate(value, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') ELSE value END
    $$`,
    `CREATE TABLE erasure_receipts (
      account_id ${TEXT} NOT NULL,
      id ${TEXT} NOT NULL,
      field ${TEXT} NOT NULL,
      value_hash ${TEXT} NOT NULL,
      matched integer NOT NULL,
      deleted integer NOT NULL,
      submission_ids ${TEXT} NOT NULL, -- JSON array
      requested_at ${TEXT} NOT NULL,
      completed_at ${TEXT} NOT NULL,
      PRIMARY KEY (account_id, id)
    )`,
    `CREATE INDEX erasure_receipts_by_time ON erasure_receipts (account_id, requested_at, id)`,
    `CREATE TABLE retention_rules (
      account_id ${TEXT} PRIMARY KEY,
      rules ${TEXT} NOT NULL -- JSON array of {popupId?, status?, olderThanDays}
    )`,
    `CREATE TABLE formsink_settings (name ${TEXT} PRIMARY KEY, value ${TEXT} NOT NULL)`,

    // The change log. Positions are per account and dense: every write of an account first
    // locks the account's row in event_heads (writes.ts), so the account's writers commit one
    // at a time and each takes the next positions while it holds the lock.
    // An event therefore never becomes visible behind a position a reader was handed, which a
    // sequence cannot promise (a value taken before commit can become visible after a later
    // one). A created event keeps no copy of the submission: its data is read from the row.
    // `pruned_through` is the newest position pruned: a reader whose cursor is older has missed
    // events (410).
    `CREATE TABLE event_heads (
      account_id ${TEXT} PRIMARY KEY,
      position bigint NOT NULL,
      pruned_through bigint NOT NULL DEFAULT 0
    )`,
    `CREATE TABLE events (
      account_id ${TEXT} NOT NULL,
      position bigint NOT NULL,
      type ${TEXT} NOT NULL,
      at bigint NOT NULL,           -- epoch milliseconds
      popup_id ${TEXT} NOT NULL,
      submission_id ${TEXT} NOT NULL,
      created_status ${TEXT},       -- submission.created: the status it was created with
      event ${TEXT} NOT NULL,       -- the event as the API shows it, JSON; of a created event, the text before its data
      PRIMARY KEY (account_id, position)
    )`,
    `CREATE INDEX events_by_time ON events (at)`,
    ...WRITE_FUNCTIONS,
  ],
  // 2: webhook endpoints and their outbox (webhooks.ts).
  WEBHOOK_MIGRATION(TEXT),
  // 3: a create takes its log positions with the head-row lock, in one UPDATE (writes.ts).
  INSERT_MIGRATION,
  // 4: imports skip the ids an account has by lookup (writes.ts); a claim locks the deliveries it leases in key order (webhooks.ts).
  [...IMPORT_MIGRATION, ...CLAIM_MIGRATION],
  // 5: an endpoint is added within the account's limit, counted under the account's head lock (webhooks.ts).
  WEBHOOK_LIMIT_MIGRATION,
  // 6: an import probes for each of its ids by the primary key, whatever plan the function caches (writes.ts).
  PROBE_MIGRATION,
  // 7: inserts count their rows' totals in their own statement, and the insert trigger is dropped (writes.ts).
  COUNTING_MIGRATION,
  // 8: a dispatcher's outcomes and its next claim in one call, one transaction (webhooks.ts).
  RECORD_AND_CLAIM_MIGRATION,
  // 9: a claim and a recording of outcomes find each delivery by its key, whatever the table's statistics (webhooks.ts).
  KEY_PROBE_MIGRATION,
];

export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS.length;

/**
 * Brings the database to the newest schema version (or to `through`: the tests make databases
 * of older versions to upgrade); safe when several servers start at once. One DO block, so one
 * statement: the client holds no transaction open (see writes.ts). Each version it applies is
 * recorded with this call's token, which says afterwards what it did.
 */
export async function migratePostgres(sql: postgres.Sql, through = POSTGRES_SCHEMA_VERSION): Promise<SchemaUpgrade> {
  const token = randomHex(16);
  const appliedAt = new Date().toISOString();
  const steps = POSTGRES_MIGRATIONS.slice(0, through).map(
    (statements, i) => `IF current < ${i + 1} THEN
    ${statements.join(";\n    ")};
    INSERT INTO formsink_migrations (version, applied_at, applied_by) VALUES (${i + 1}, '${appliedAt}', '${token}');
  END IF;`,
  );
  await sql.unsafe(`DO $formsink_migrate$
DECLARE
  current integer;
BEGIN
  PERFORM pg_advisory_xact_lock(${MIGRATION_LOCK});
  PERFORM set_config('client_min_messages', 'warning', true);
  CREATE TABLE IF NOT EXISTS formsink_migrations (version integer PRIMARY KEY, applied_at text NOT NULL, applied_by text NOT NULL);
  SELECT COALESCE(MAX(version), 0) INTO current FROM formsink_migrations;
  IF current > ${POSTGRES_SCHEMA_VERSION} THEN
    RAISE EXCEPTION 'database schema version % is newer than this formsink knows (${POSTGRES_SCHEMA_VERSION}): it was written by a newer formsink; upgrade formsink', current;
  END IF;
  ${steps.join("\n  ")}
END $formsink_migrate$`);
  const [row] = await sql.unsafe(
    `SELECT MAX(version)::int AS newest, (SELECT MIN(version)::int - 1 FROM formsink_migrations WHERE applied_by = $1) AS first FROM formsink_migrations`,
    [token],
  );
  const to = Number(row!.newest);
  return { from: row!.first === null ? to : Number(row!.first), to };
}
