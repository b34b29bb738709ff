/**
 * Schema versions, applied in order on open. A migration is never edited once released: a
 * change is a new entry. Each runs in the same write transaction as its version record, so a
 * crash leaves the schema at one version or the next, never between.
 *
 * So a migration reads nothing the live code may change: every value its SQL is built from is
 * defined here and frozen with it (the list of counted columns, the numbering of days), never
 * imported. `test/stores/released-migrations.test.ts` holds a digest of each released
 * migration's statements and fails when one changes.
 */

/**
 * The columns migrations 10, 11, 12, 18 and 19 count per value and day (`submission_value_days`):
 * the equality filters when they were released (counting.ts's `EQUALITY_COLUMNS` then), frozen.
 * A filter added later is counted by a migration of its own, with a list of its own.
 */
const VALUE_DAY_COLUMNS = ["popup_id", "domain", "device", "status"] as const;

/** The insert triggers' condition from migration 11: no import is adding rows in this transaction. */
const NOT_IMPORTING = "NOT EXISTS (SELECT 1 FROM submission_import)";

/**
 * The insert trigger's statements adding a new row to its tuple's count and its tuple's count of
 * its day (migrations 4 and 7), as migrations 11, 12 and 18 write them into that trigger.
 */
const TUPLE_COUNTS_ADDED = `INSERT INTO submission_counts (account_id, popup_id, domain, device, status, n)
        VALUES (NEW.account_id, NEW.popup_id, NEW.domain, NEW.device, NEW.status, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
      INSERT INTO submission_day_counts (account_id, day, popup_id, domain, device, status, n)
        VALUES (NEW.account_id, ${dayOf("NEW.created_at")}, NEW.popup_id, NEW.domain, NEW.device, NEW.status, 1)
        ON CONFLICT DO UPDATE SET n = n + 1`;

/** The columns migration 20 copies into the numbered `webhooks` (all but the number). */
const WEBHOOK_COLUMNS = "account_id, id, url, types, popup_id, description, created_at, disabled_at, secrets, previous_secret_expires_at, " +
  "failing_since, log_position, lease_owner, lease_until, lease_claim, lease_last, lease_at";

/** The columns migration 20 copies into the numbered `webhook_deliveries` (all but the endpoint's). */
const DELIVERY_COLUMNS = "position, event_id, event_type, status, attempts, first_attempt_at, last_attempt_at, next_attempt_at, " +
  "last_status_code, last_error, last_duration_ms, lease_owner, lease_until, lease_claim";

export const MIGRATIONS: readonly (readonly string[])[] = [
  // 1: accounts, keys, submissions
  [
    `CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL
    )`,
    `CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts (id),
      kind TEXT NOT NULL CHECK (kind IN ('secret', 'publishable')),
      hash TEXT NOT NULL,
      domains TEXT NOT NULL,
      created_at TEXT NOT NULL,
      revoked_at TEXT
    )`,
    `CREATE TABLE submissions (
      account_id TEXT NOT NULL,
      id TEXT NOT NULL,
      popup_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      device TEXT NOT NULL,
      user_agent TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'completed')),
      created_at INTEGER NOT NULL, -- epoch milliseconds: compact, and range filters compare numbers
      data TEXT NOT NULL,          -- the JSON object as the visitor sent it
      PRIMARY KEY (account_id, id)
    )`,
    // One index per equality filter, each ending in the list order (created_at, id), so every
    // filter and both orders are served by an index walk (forwards or backwards), never a scan
    // of the table. Combined filters start from one of them.
    `CREATE INDEX submissions_by_time ON submissions (account_id, created_at, id)`,
    `CREATE INDEX submissions_by_popup ON submissions (account_id, popup_id, created_at, id)`,
    `CREATE INDEX submissions_by_domain ON submissions (account_id, domain, created_at, id)`,
    `CREATE INDEX submissions_by_device ON submissions (account_id, device, created_at, id)`,
    `CREATE INDEX submissions_by_status ON submissions (account_id, status, created_at, id)`,
  ],
  // 2: idempotency records and shared rate-limit counters
  [
    `CREATE TABLE idempotency_keys (
      account_id TEXT NOT NULL,
      idempotency_key TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      submission_id TEXT NOT NULL,
      submission TEXT NOT NULL,      -- the submission as first stored, JSON: what a retry gets back
      expires_at INTEGER NOT NULL,   -- epoch milliseconds
      PRIMARY KEY (account_id, idempotency_key)
    )`,
    // Expired records are dropped by a range delete; a deleted submission takes its records along.
    `CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at)`,
    `CREATE INDEX idempotency_keys_by_submission ON idempotency_keys (account_id, submission_id)`,
    `CREATE TABLE rate_limit_counters (
      bucket TEXT PRIMARY KEY,
      window_start INTEGER NOT NULL, -- epoch milliseconds
      window_end INTEGER NOT NULL,
      hits INTEGER NOT NULL
    )`,
    `CREATE INDEX rate_limit_counters_by_end ON rate_limit_counters (window_end)`,
  ],
  // 3: the data keys each popup's submissions have used, so that a CSV export knows its columns
  // without reading every row first. Kept by every insert; never shrunk (a deleted submission's
  // keys stay), so it is a superset, which costs at most an empty column.
  [
    `CREATE TABLE submission_data_keys (
      account_id TEXT NOT NULL,
      popup_id TEXT NOT NULL,
      key TEXT NOT NULL,
      PRIMARY KEY (account_id, popup_id, key)
    ) WITHOUT ROWID`,
    `INSERT OR IGNORE INTO submission_data_keys (account_id, popup_id, key)
      SELECT DISTINCT account_id, popup_id, data_key.key FROM submissions, json_each(submissions.data) AS data_key`,
  ],
  // 4: maintained totals. One count per (account, popup, domain, device, status) that holds
  // rows, kept by triggers in the very transaction of each insert, delete and status change, so
  // a total is never wrong and a list's total for equality filters is a sum over at most a few
  // hundred counts instead of a COUNT(*) over every matching row. Date-bounded totals still
  // count rows, over the covering time index below (no table lookups).
  [
    `CREATE TABLE submission_counts (
      account_id TEXT NOT NULL,
      popup_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      device TEXT NOT NULL,
      status TEXT NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (account_id, popup_id, domain, device, status)
    ) WITHOUT ROWID`,
    `INSERT INTO submission_counts (account_id, popup_id, domain, device, status, n)
      SELECT account_id, popup_id, domain, device, status, COUNT(*) FROM submissions GROUP BY 1, 2, 3, 4, 5`,
    `CREATE TRIGGER submissions_counted_on_insert AFTER INSERT ON submissions BEGIN
      INSERT INTO submission_counts (account_id, popup_id, domain, device, status, n)
        VALUES (NEW.account_id, NEW.popup_id, NEW.domain, NEW.device, NEW.status, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
    END`,
    `CREATE TRIGGER submissions_counted_on_delete AFTER DELETE ON submissions BEGIN
      UPDATE submission_counts SET n = n - 1
        WHERE account_id = OLD.account_id AND popup_id = OLD.popup_id AND domain = OLD.domain AND device = OLD.device AND status = OLD.status;
    END`,
    // Only status changes today; the other columns are listed so that a future UPDATE of any of
    // them cannot leave the counts behind.
    `CREATE TRIGGER submissions_counted_on_update AFTER UPDATE OF account_id, popup_id, domain, device, status ON submissions BEGIN
      UPDATE submission_counts SET n = n - 1
        WHERE account_id = OLD.account_id AND popup_id = OLD.popup_id AND domain = OLD.domain AND device = OLD.device AND status = OLD.status;
      INSERT INTO submission_counts (account_id, popup_id, domain, device, status, n)
        VALUES (NEW.account_id, NEW.popup_id, NEW.domain, NEW.device, NEW.status, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
    END`,
    // The time index also carries the filter columns, so a date-bounded COUNT(*) reads the index only.
    `DROP INDEX submissions_by_time`,
    `CREATE INDEX submissions_by_time ON submissions (account_id, created_at, id, popup_id, domain, device, status)`,
  ],
  // 5: privacy. The identifying-field index lets an erasure find a person's submissions without
  // reading the account: one row per (submission, identifying field with a string value), kept
  // by triggers in the very transaction of every insert (create, idempotent create, import) and
  // delete, from the fields listed in identifying_fields (the store's `identifyingFields`). An
  // email is kept lower-cased. Then erasure receipts (a keyed hash of the value, never the
  // value), retention rules, and settings (the key of that hash, made once per database).
  [
    `CREATE TABLE identifying_fields (field TEXT PRIMARY KEY) WITHOUT ROWID`,
    `INSERT INTO identifying_fields (field) VALUES ('email')`,
    `CREATE TABLE submission_identifiers (
      account_id TEXT NOT NULL,
      field TEXT NOT NULL,
      value_key TEXT NOT NULL,
      submission_id TEXT NOT NULL,
      PRIMARY KEY (account_id, field, value_key, submission_id)
    ) WITHOUT ROWID`,
    `INSERT OR IGNORE INTO submission_identifiers (account_id, field, value_key, submission_id)
      SELECT submissions.account_id, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, submissions.id
      FROM submissions, json_each(submissions.data) AS data_field JOIN identifying_fields ON identifying_fields.field = data_field.key
      WHERE data_field.type = 'text'`,
    `CREATE TRIGGER submissions_identified_on_insert AFTER INSERT ON submissions BEGIN
      INSERT OR IGNORE INTO submission_identifiers (account_id, field, value_key, submission_id)
        SELECT NEW.account_id, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, NEW.id
        FROM json_each(NEW.data) AS data_field JOIN identifying_fields ON identifying_fields.field = data_field.key
        WHERE data_field.type = 'text';
    END`,
    // By primary key, from the deleted row's own data: no index by submission is needed.
    `CREATE TRIGGER submissions_identified_on_delete AFTER DELETE ON submissions BEGIN
      DELETE FROM submission_identifiers WHERE (account_id, field, value_key, submission_id) IN (
        SELECT OLD.account_id, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, OLD.id
        FROM json_each(OLD.data) AS data_field WHERE data_field.type = 'text');
    END`,
    `CREATE TABLE erasure_receipts (
      account_id TEXT NOT NULL,
      id TEXT NOT NULL,
      field TEXT NOT NULL,
      value_hash TEXT NOT NULL,
      matched INTEGER NOT NULL,
      deleted INTEGER NOT NULL,
      submission_ids TEXT NOT NULL, -- JSON array
      requested_at TEXT NOT NULL,
      completed_at TEXT NOT NULL,
      PRIMARY KEY (account_id, id)
    )`,
    `CREATE INDEX erasure_receipts_by_time ON erasure_receipts (account_id, requested_at)`,
    `CREATE TABLE retention_rules (
      account_id TEXT PRIMARY KEY,
      rules TEXT NOT NULL -- JSON array of {popupId?, status?, olderThanDays}
    )`,
    `CREATE TABLE formsink_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  ],
  // 6: the change log. `position` is assigned inside each write transaction, and SQLite has one
  // writer at a time, so positions grow in commit order: a reader never finds a new event at or
  // before a position it already read. AUTOINCREMENT keeps positions from being reused after the
  // newest events are pruned. A created event keeps no copy of the submission: its data is read
  // from the row (with the status it was created with), so a deleted submission leaves none of
  // its data behind. `event_horizons` records, per account, the newest position pruned: a reader
  // whose cursor is older has missed events (410).
  [
    `CREATE TABLE events (
      position INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      type TEXT NOT NULL,
      at INTEGER NOT NULL,           -- epoch milliseconds
      popup_id TEXT NOT NULL,
      submission_id TEXT NOT NULL,
      created_status TEXT,           -- submission.created: the status it was created with
      event TEXT NOT NULL            -- the event as the API shows it, JSON; of a created event, the text before its data
    )`,
    `CREATE INDEX events_by_account ON events (account_id, position)`,
    `CREATE TABLE event_horizons (
      account_id TEXT PRIMARY KEY,
      pruned_through INTEGER NOT NULL
    ) WITHOUT ROWID`,
  ],
  // 7: lists whose cost does not follow how many rows the filters skip (list-query.ts). One
  // index per tuple of the maintained counts (migration 4), in the list order, so that a list
  // with two or more equality filters is a merge of the matching tuples' ranges, whatever the
  // filters' correlation. And the counts per UTC day too, kept by triggers in the transaction
  // of every write as migration 4's are, so that a date-bounded total sums the whole days
  // inside its range and counts rows only in the two days at its ends. The time index no
  // longer needs to carry the filter columns (migration 4): narrow, a deep offset steps over
  // fewer pages.
  [
    // By tuple, then day: a total reads a range of days of each matching tuple.
    `CREATE TABLE submission_day_counts (
      account_id TEXT NOT NULL,
      popup_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      device TEXT NOT NULL,
      status TEXT NOT NULL,
      day INTEGER NOT NULL, -- whole UTC days since 1970-01-01 (floor of created_at / 86400000)
      n INTEGER NOT NULL,
      PRIMARY KEY (account_id, popup_id, domain, device, status, day)
    ) WITHOUT ROWID`,
    `INSERT INTO submission_day_counts (account_id, day, popup_id, domain, device, status, n)
      SELECT account_id, ${dayOf("created_at")}, popup_id, domain, device, status, COUNT(*) FROM submissions GROUP BY 1, 2, 3, 4, 5, 6`,
    `CREATE TRIGGER submissions_day_counted_on_insert AFTER INSERT ON submissions BEGIN
      INSERT INTO submission_day_counts (account_id, day, popup_id, domain, device, status, n)
        VALUES (NEW.account_id, ${dayOf("NEW.created_at")}, NEW.popup_id, NEW.domain, NEW.device, NEW.status, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
    END`,
    `CREATE TRIGGER submissions_day_counted_on_delete AFTER DELETE ON submissions BEGIN
      UPDATE submission_day_counts SET n = n - 1
        WHERE account_id = OLD.account_id AND day = ${dayOf("OLD.created_at")} AND popup_id = OLD.popup_id AND domain = OLD.domain
          AND device = OLD.device AND status = OLD.status;
    END`,
    `CREATE TRIGGER submissions_day_counted_on_update AFTER UPDATE OF account_id, popup_id, domain, device, status, created_at ON submissions BEGIN
      UPDATE submission_day_counts SET n = n - 1
        WHERE account_id = OLD.account_id AND day = ${dayOf("OLD.created_at")} AND popup_id = OLD.popup_id AND domain = OLD.domain
          AND device = OLD.device AND status = OLD.status;
      INSERT INTO submission_day_counts (account_id, day, popup_id, domain, device, status, n)
        VALUES (NEW.account_id, ${dayOf("NEW.created_at")}, NEW.popup_id, NEW.domain, NEW.device, NEW.status, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
    END`,
    `CREATE INDEX submissions_by_tuple ON submissions (account_id, popup_id, domain, device, status, created_at, id)`,
    `DROP INDEX submissions_by_time`,
    `CREATE INDEX submissions_by_time ON submissions (account_id, created_at, id)`,
  ],
  // 8: webhook endpoints and their outbox, which is the change log plus delivery state: a create
  // writes nothing here. `log_position` is an endpoint's place in the log: the newest position it
  // has taken into its deliveries, or skipped while disabled. A claim moves the events after it
  // into `webhook_deliveries`, one row per (endpoint, event), with the event's id and type (what
  // the log lists and a retry names) and the lease that lets one dispatcher at a time make an
  // attempt. Deliveries go when their events are pruned.
  [
    `CREATE TABLE webhooks (
      account_id TEXT NOT NULL,
      id TEXT NOT NULL,
      url TEXT NOT NULL,
      types TEXT,                    -- JSON array of event types; NULL for every type
      popup_id TEXT,
      description TEXT,
      created_at TEXT NOT NULL,
      disabled_at TEXT,
      secrets TEXT NOT NULL,         -- JSON array, newest first
      previous_secret_expires_at INTEGER,
      failing_since INTEGER,
      log_position INTEGER NOT NULL,
      PRIMARY KEY (account_id, id)
    )`,
    `CREATE TABLE webhook_deliveries (
      account_id TEXT NOT NULL,
      webhook_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      event_id TEXT NOT NULL,
      event_type TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts INTEGER NOT NULL,
      first_attempt_at INTEGER,      -- epoch milliseconds, as every time below
      last_attempt_at INTEGER,
      next_attempt_at INTEGER,       -- while pending
      last_status_code INTEGER,
      last_error TEXT,
      last_duration_ms INTEGER,
      lease_owner TEXT,
      lease_until INTEGER,
      lease_claim TEXT,              -- the claim that took the lease: how a claim reads back what it took
      UNIQUE (account_id, webhook_id, position)
    )`,
    // A claim reads only pending deliveries: each endpoint's run of never-attempted ones, where
    // such runs are held back (the leased and the not yet due), and due retries; reading back
    // what it leased goes by the lease's end. Pruning and the listing go by endpoint and
    // position (the UNIQUE index).
    `CREATE INDEX webhook_deliveries_unattempted ON webhook_deliveries (account_id, webhook_id, position) WHERE status = 'pending' AND attempts = 0`,
    `CREATE INDEX webhook_deliveries_unattempted_by_time ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND attempts = 0`,
    `CREATE INDEX webhook_deliveries_retries ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND attempts > 0`,
    `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (lease_until) WHERE lease_until IS NOT NULL`,
    `CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (account_id, webhook_id, event_id)`,
  ],
  // 9: the account's counts per UTC day, kept by triggers in the transaction of every write as
  // migration 7's are, so that a date-bounded total without equality filters reads a row per
  // day rather than every tuple's, and a deep offset without equality filters skips whole days
  // by their counts (list-query.ts).
  [
    `CREATE TABLE submission_account_days (
      account_id TEXT NOT NULL,
      day INTEGER NOT NULL, -- as submission_day_counts' day
      n INTEGER NOT NULL,
      PRIMARY KEY (account_id, day)
    ) WITHOUT ROWID`,
    `INSERT INTO submission_account_days (account_id, day, n)
      SELECT account_id, ${dayOf("created_at")}, COUNT(*) FROM submissions GROUP BY 1, 2`,
    `CREATE TRIGGER submissions_account_day_counted_on_insert AFTER INSERT ON submissions BEGIN
      INSERT INTO submission_account_days (account_id, day, n) VALUES (NEW.account_id, ${dayOf("NEW.created_at")}, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
    END`,
    `CREATE TRIGGER submissions_account_day_counted_on_delete AFTER DELETE ON submissions BEGIN
      UPDATE submission_account_days SET n = n - 1 WHERE account_id = OLD.account_id AND day = ${dayOf("OLD.created_at")};
    END`,
    `CREATE TRIGGER submissions_account_day_counted_on_update AFTER UPDATE OF account_id, created_at ON submissions BEGIN
      UPDATE submission_account_days SET n = n - 1 WHERE account_id = OLD.account_id AND day = ${dayOf("OLD.created_at")};
      INSERT INTO submission_account_days (account_id, day, n) VALUES (NEW.account_id, ${dayOf("NEW.created_at")}, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
    END`,
  ],
  // 10: counts per UTC day of each value of each equality filter (a popup, a domain, a device, a
  // status), kept by triggers in the transaction of every write as migrations 7 and 9's are, so
  // that a deep offset with one equality filter skips whole days by their counts as one without
  // filters does (list-query.ts). By field, then day: a day's counts of one field are side by
  // side, so a create changes one page per field (a group commit writes each changed page),
  // and a deep offset reads its field's days, every value's, and keeps its value's.
  // Filled from migration 7's counts per tuple and day.
  [
    `CREATE TABLE submission_value_days (
      account_id TEXT NOT NULL,
      field TEXT NOT NULL, -- the column: popup_id, domain, device or status
      day INTEGER NOT NULL, -- as submission_day_counts' day
      value TEXT NOT NULL,
      n INTEGER NOT NULL,
      PRIMARY KEY (account_id, field, day, value)
    ) WITHOUT ROWID`,
    ...VALUE_DAY_COLUMNS.map((column) => `INSERT INTO submission_value_days (account_id, field, value, day, n)
      SELECT account_id, '${column}', ${column}, day, SUM(n) FROM submission_day_counts GROUP BY account_id, ${column}, day`),
    `CREATE TRIGGER submissions_value_day_counted_on_insert AFTER INSERT ON submissions BEGIN
      ${valueDaysAdded("NEW")};
    END`,
    `CREATE TRIGGER submissions_value_day_counted_on_delete AFTER DELETE ON submissions BEGIN
      ${valueDaysTaken("OLD")};
    END`,
    `CREATE TRIGGER submissions_value_day_counted_on_update AFTER UPDATE OF account_id, popup_id, domain, device, status, created_at ON submissions BEGIN
      ${valueDaysTaken("OLD")};
      ${valueDaysAdded("NEW")};
    END`,
  ],
  // 11: imports count their rows per batch. `submission_import` holds a row only inside an
  // import's own transaction (inserted first, deleted last, so no reader ever sees it): the
  // rowid the table had before the import's rows, whose rows are then every rowid above it.
  // While it holds that row, the insert triggers of the counts (4, 7, 9, 10) and of the
  // identifier index (5) stand aside, and the import adds its rows to each table in a grouped
  // statement (import.ts), in the same transaction: a trigger's statements run once per row.
  // `submission_import_days` is the import's rows counted per tuple and day, which every table
  // of counts is a sum of; it too is emptied before the transaction ends. Every other write is
  // counted by the triggers as before.
  [
    `CREATE TABLE submission_import (rowid_before INTEGER NOT NULL)`,
    `CREATE TABLE submission_import_days (
      popup_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      device TEXT NOT NULL,
      status TEXT NOT NULL,
      day INTEGER NOT NULL,
      n INTEGER NOT NULL
    )`,
    ...[
      "submissions_counted_on_insert",
      "submissions_identified_on_insert",
      "submissions_day_counted_on_insert",
      "submissions_account_day_counted_on_insert",
      "submissions_value_day_counted_on_insert",
    ].map((trigger) => `DROP TRIGGER ${trigger}`),
    `CREATE TRIGGER submissions_counted_on_insert AFTER INSERT ON submissions WHEN ${NOT_IMPORTING} BEGIN
      ${TUPLE_COUNTS_ADDED};
      INSERT INTO submission_account_days (account_id, day, n) VALUES (NEW.account_id, ${dayOf("NEW.created_at")}, 1)
        ON CONFLICT DO UPDATE SET n = n + 1;
      ${valueDaysAdded("NEW")};
    END`,
    `CREATE TRIGGER submissions_identified_on_insert AFTER INSERT ON submissions WHEN ${NOT_IMPORTING} BEGIN
      INSERT OR IGNORE INTO submission_identifiers (account_id, field, value_key, submission_id)
        SELECT NEW.account_id, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, NEW.id
        FROM json_each(NEW.data) AS data_field JOIN identifying_fields ON identifying_fields.field = data_field.key
        WHERE data_field.type = 'text';
    END`,
  ],
  // 12: a row costs less to write. The indexes of the domain, the device and the status
  // (migration 1) are no longer read: a list with one of them chooses by the counts between
  // walking the popup's index (with a popup filter) or the time index and merging the matching
  // tuples' ranges of submissions_by_tuple (migration 7), as lists with two or more filters did
  // already (list-query.ts). Every create and import wrote an entry in each of them. The
  // popup's stays: lists are filtered by popup most. And the account's counts per day
  // (migration 9) are no longer kept: every row has one status, so they are the sum of its
  // statuses' counts per day (migration 10), two rows a day, which list-query.ts reads instead;
  // a create updated a row of them.
  [
    `DROP INDEX submissions_by_domain`,
    `DROP INDEX submissions_by_device`,
    `DROP INDEX submissions_by_status`,
    `DROP TRIGGER submissions_account_day_counted_on_delete`,
    `DROP TRIGGER submissions_account_day_counted_on_update`,
    `DROP TABLE submission_account_days`,
    `DROP TRIGGER submissions_counted_on_insert`,
    `CREATE TRIGGER submissions_counted_on_insert AFTER INSERT ON submissions WHEN ${NOT_IMPORTING} BEGIN
      ${TUPLE_COUNTS_ADDED};
      ${valueDaysAdded("NEW")};
    END`,
  ],
  // 13: an endpoint's first attempts are leased as a range of its log, not row by row. A claim
  // leases the endpoint (`lease_owner`, `lease_until`, `lease_claim` as a delivery's lease) for
  // its events after `log_position` up to `lease_last`, taken at `lease_at`; a delivery row is
  // written only once its first attempt has an outcome, with that outcome, and `log_position`
  // moves past it. Rows written before keep their own leases (sql/webhooks.ts).
  [
    `ALTER TABLE webhooks ADD COLUMN lease_owner TEXT`,
    `ALTER TABLE webhooks ADD COLUMN lease_until INTEGER`,
    `ALTER TABLE webhooks ADD COLUMN lease_claim TEXT`,
    `ALTER TABLE webhooks ADD COLUMN lease_last INTEGER`,
    `ALTER TABLE webhooks ADD COLUMN lease_at INTEGER`,
  ],
  // 14: the rowid a created event's submission had when the event was
  // written: the feed finds the row by it, one lookup instead of two (by the primary key's
  // index, then the table). A table without an INTEGER PRIMARY KEY may have its rowids
  // renumbered by VACUUM, so the row found is checked against the event's account and id, and
  // looked up by them when it is not that one (or the event is older than this column).
  [`ALTER TABLE events ADD COLUMN submission_rowid INTEGER`],
  // 15: a group commit of creates keeps its rows' counts once per group (group-counts.ts): it
  // holds a row of `submission_import` with `counts_only` set, inside its own transaction as an
  // import does (migration 11), so the insert trigger of the counts stands aside, and adds the
  // group's counts itself before the commit. The identifier index's trigger stands aside only
  // for an import: for a group's few rows it costs less than the import's grouped statement.
  [
    `ALTER TABLE submission_import ADD COLUMN counts_only INTEGER NOT NULL DEFAULT 0`,
    `DROP TRIGGER submissions_identified_on_insert`,
    `CREATE TRIGGER submissions_identified_on_insert AFTER INSERT ON submissions
      WHEN NOT EXISTS (SELECT 1 FROM submission_import WHERE counts_only = 0) BEGIN
      INSERT OR IGNORE INTO submission_identifiers (account_id, field, value_key, submission_id)
        SELECT NEW.account_id, data_field.key, CASE data_field.key WHEN 'email' THEN lower(data_field.value) ELSE data_field.value END, NEW.id
        FROM json_each(NEW.data) AS data_field JOIN identifying_fields ON identifying_fields.field = data_field.key
        WHERE data_field.type = 'text';
    END`,
  ],
  // 16: plain_text (submission-row.ts): 1 when none of a row's text fields holds a character
  // JSON escapes, so that SQLite writes them between quotes as they are rather than by
  // json_quote wherever it writes a row's JSON (list pages, gets, exports, the change log);
  // every write of a row sets it. Here it is worked out for the rows
  // before, and again whenever one of those fields (or the flag itself) is updated: a row edited
  // by hand is never vouched for by a stale flag. A field holds no such character exactly when
  // json_quote adds nothing but the quotes around it. `status` is bounded by its CHECK.
  [
    `ALTER TABLE submissions ADD COLUMN plain_text INTEGER`,
    `UPDATE submissions SET plain_text = (${plainTextTest("")})`,
    `CREATE TRIGGER submissions_plain_text_on_update AFTER UPDATE OF id, popup_id, domain, user_agent, device, plain_text ON submissions BEGIN
      UPDATE submissions SET plain_text = (${plainTextTest("NEW.")}) WHERE rowid = NEW.rowid;
    END`,
  ],
  // 17: the index a retry finds its delivery by holds the event's id alone, not after the
  // endpoint's account and id (migration 8). Every first attempt's outcome inserts an entry in
  // it inside the dispatcher's write transaction, which holds the write lock the creates' group
  // commits wait for: a shorter entry, and the outcomes of every endpoint go to the same few
  // pages at the index's end (an event id starts with its time) where each endpoint's went to
  // pages of its own. An event's id names one event of one account, so a retry's lookup reads
  // a row per endpoint the event went to and keeps the one asked for.
  [
    `DROP INDEX webhook_deliveries_by_event`,
    `CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id)`,
  ],
  // 18: counts per UTC day of each (domain, device, status), every popup's together, kept as
  // migration 7's per tuple are (the insert trigger, a group commit's and an import's grouped
  // upserts; triggers for deletes and updates), so that a dated total with two or more equality
  // filters and no popup filter sums a range of days for each matching (domain, device, status)
  // rather than for each matching tuple: `device=tablet&status=completed` over a month reads six
  // ranges where migration 7's counts have 69 (list-query.ts).
  [
    `CREATE TABLE submission_day_counts_all_popups (
      account_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      device TEXT NOT NULL,
      status TEXT NOT NULL,
      day INTEGER NOT NULL, -- as submission_day_counts' day
      n INTEGER NOT NULL,
      PRIMARY KEY (account_id, domain, device, status, day)
    ) WITHOUT ROWID`,
    `INSERT INTO submission_day_counts_all_popups (account_id, domain, device, status, day, n)
      SELECT account_id, domain, device, status, day, SUM(n) FROM submission_day_counts GROUP BY account_id, domain, device, status, day`,
    `DROP TRIGGER submissions_counted_on_insert`,
    `CREATE TRIGGER submissions_counted_on_insert AFTER INSERT ON submissions WHEN ${NOT_IMPORTING} BEGIN
      ${TUPLE_COUNTS_ADDED};
      ${allPopupsDayAdded("NEW")};
      ${valueDaysAdded("NEW")};
    END`,
    `CREATE TRIGGER submissions_all_popups_day_counted_on_delete AFTER DELETE ON submissions BEGIN
      ${allPopupsDayTaken("OLD")};
    END`,
    `CREATE TRIGGER submissions_all_popups_day_counted_on_update AFTER UPDATE OF account_id, domain, device, status, created_at ON submissions BEGIN
      ${allPopupsDayTaken("OLD")};
      ${allPopupsDayAdded("NEW")};
    END`,
  ],
  // 19: an update moves a row between the counts per value and day (migration 10) only for the
  // fields whose value or day it changes: one trigger per field, each run only then. A status
  // change updated the day's rows of the row's popup, domain and device too (less one, then
  // plus one), and so wrote a page of each of those fields to the WAL for no change of a count.
  [
    `DROP TRIGGER submissions_value_day_counted_on_update`,
    ...VALUE_DAY_COLUMNS.map((column) => `CREATE TRIGGER submissions_value_day_counted_on_${column}_update
      AFTER UPDATE OF account_id, ${column}, created_at ON submissions
      WHEN OLD.account_id IS NOT NEW.account_id OR OLD.${column} IS NOT NEW.${column} OR ${dayOf("OLD.created_at")} IS NOT ${dayOf("NEW.created_at")} BEGIN
      ${valueDayTaken("OLD", column)};
      ${valueDayAdded("NEW", column)};
    END`),
  ],
  // 20: a delivery names its endpoint by a number (`webhooks.endpoint`) instead of the account's
  // and the endpoint's ids. Every first attempt's outcome inserts a row and an entry in the unique
  // index by endpoint and position inside the dispatcher's write transaction (the write lock the
  // creates' group commits wait for): each endpoint's entries go in the middle of that index,
  // where SQLite rebalances neighbouring pages each time one fills, and short entries fill them
  // far less often. The account is the endpoint's. AUTOINCREMENT: a number is never given to a
  // second endpoint, so nothing written for a deleted endpoint can become another's.
  [
    `CREATE TABLE webhooks_numbered (
      endpoint INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      id TEXT NOT NULL,
      url TEXT NOT NULL,
      types TEXT,                    -- JSON array of event types; NULL for every type
      popup_id TEXT,
      description TEXT,
      created_at TEXT NOT NULL,
      disabled_at TEXT,
      secrets TEXT NOT NULL,         -- JSON array, newest first
      previous_secret_expires_at INTEGER,
      failing_since INTEGER,
      log_position INTEGER NOT NULL,
      lease_owner TEXT,
      lease_until INTEGER,
      lease_claim TEXT,
      lease_last INTEGER,
      lease_at INTEGER,
      UNIQUE (account_id, id)
    )`,
    `INSERT INTO webhooks_numbered (endpoint, ${WEBHOOK_COLUMNS}) SELECT rowid, ${WEBHOOK_COLUMNS} FROM webhooks ORDER BY rowid`,
    `CREATE TABLE webhook_deliveries_numbered (
      endpoint INTEGER NOT NULL,     -- webhooks.endpoint
      position INTEGER NOT NULL,
      event_id TEXT NOT NULL,
      event_type TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts INTEGER NOT NULL,
      first_attempt_at INTEGER,      -- epoch milliseconds, as every time below
      last_attempt_at INTEGER,
      next_attempt_at INTEGER,       -- while pending
      last_status_code INTEGER,
      last_error TEXT,
      last_duration_ms INTEGER,
      lease_owner TEXT,
      lease_until INTEGER,
      lease_claim TEXT,              -- the claim that took the lease: how a claim reads back what it took
      UNIQUE (endpoint, position)
    )`,
    `INSERT INTO webhook_deliveries_numbered (endpoint, ${DELIVERY_COLUMNS})
      SELECT webhooks_numbered.endpoint, ${DELIVERY_COLUMNS.split(", ").map((column) => `webhook_deliveries.${column}`).join(", ")}
      FROM webhook_deliveries JOIN webhooks_numbered ON webhooks_numbered.account_id = webhook_deliveries.account_id
        AND webhooks_numbered.id = webhook_deliveries.webhook_id
      ORDER BY webhook_deliveries.rowid`,
    `DROP TABLE webhook_deliveries`,
    `DROP TABLE webhooks`,
    `ALTER TABLE webhooks_numbered RENAME TO webhooks`,
    `ALTER TABLE webhook_deliveries_numbered RENAME TO webhook_deliveries`,
    // As migrations 8 and 17 made them, by endpoint number.
    `CREATE INDEX webhook_deliveries_unattempted ON webhook_deliveries (endpoint, position) WHERE status = 'pending' AND attempts = 0`,
    `CREATE INDEX webhook_deliveries_unattempted_by_time ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND attempts = 0`,
    `CREATE INDEX webhook_deliveries_retries ON webhook_deliveries (next_attempt_at) WHERE status = 'pending' AND attempts > 0`,
    `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (lease_until) WHERE lease_until IS NOT NULL`,
    `CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id)`,
  ],
  // 21: the popup's index also holds each row's status, after the list order, so that a list
  // that walks it for a status (list-query.ts's `indexWalk`) reads the status from the index
  // and seeks the table only for the rows it keeps, not for every entry it passes. A status
  // change rewrites the row's entry here too (in place: the order columns come first).
  [
    `DROP INDEX submissions_by_popup`,
    `CREATE INDEX submissions_by_popup ON submissions (account_id, popup_id, created_at, id, status)`,
  ],
  // 22: positions counted per account. `account_position` is an event's place in its account's
  // log, one past the account's newest (or newest pruned) when it is written, in the write
  // transaction, so, SQLite having one writer, dense and in commit order; how far it moves
  // depends on the account's own changes alone. Cursors, `event_horizons.pruned_through` and the
  // outbox's places (`webhooks.log_position`, `lease_last`, `webhook_deliveries.position`) are
  // account positions from here on; `position` stays the order of every account's events
  // together, which pruning (oldest first) and a claim across endpoints go by. An event written
  // before keeps its position as its account position: a cursor, horizon or place held from
  // before means the same events, and an account's next event is numbered past every one of them.
  [
    `ALTER TABLE events ADD COLUMN account_position INTEGER`,
    `UPDATE events SET account_position = position`,
    `DROP INDEX events_by_account`,
    `CREATE INDEX events_by_account ON events (account_id, account_position)`,
    // An import numbers its events past the account's newest position, read before its rows (sql/import.ts).
    `ALTER TABLE submission_import ADD COLUMN position_before INTEGER`,
  ],
];

/** Adds a row (of `row`: NEW or OLD) to migration 18's counts of its (domain, device, status) and day. */
function allPopupsDayAdded(row: string): string {
  return `INSERT INTO submission_day_counts_all_popups (account_id, domain, device, status, day, n)
        VALUES (${row}.account_id, ${row}.domain, ${row}.device, ${row}.status, ${dayOf(`${row}.created_at`)}, 1)
        ON CONFLICT DO UPDATE SET n = n + 1`;
}

/** Takes a row from migration 18's counts, by primary key. */
function allPopupsDayTaken(row: string): string {
  return `UPDATE submission_day_counts_all_popups SET n = n - 1
        WHERE account_id = ${row}.account_id AND domain = ${row}.domain AND device = ${row}.device AND status = ${row}.status
          AND day = ${dayOf(`${row}.created_at`)}`;
}

/** Migration 16's test of a row's text fields (of `row`: "" or "NEW."): true when json_quote of each adds only its quotes. */
function plainTextTest(row: string): string {
  return ["id", "popup_id", "domain", "user_agent", "device"].map((column) => `json_quote(${row}${column}) = '"' || ${row}${column} || '"'`).join(" AND ");
}

/** One statement adding a row's values to their days (of `row`: NEW or OLD). */
function valueDaysAdded(row: string): string {
  const values = VALUE_DAY_COLUMNS.map((column) => `(${row}.account_id, '${column}', ${row}.${column}, ${dayOf(`${row}.created_at`)}, 1)`);
  return `INSERT INTO submission_value_days (account_id, field, value, day, n) VALUES ${values.join(", ")} ON CONFLICT DO UPDATE SET n = n + 1`;
}

/** A statement per equality filter taking a row's values from their days, each by primary key. */
function valueDaysTaken(row: string): string {
  return VALUE_DAY_COLUMNS.map((column) => valueDayTaken(row, column)).join(";\n      ");
}

/** Takes a row (of `row`: NEW or OLD) from its value's day of one equality filter's `column`, by primary key. */
function valueDayTaken(row: string, column: string): string {
  return `UPDATE submission_value_days SET n = n - 1
        WHERE account_id = ${row}.account_id AND field = '${column}' AND value = ${row}.${column} AND day = ${dayOf(`${row}.created_at`)}`;
}

/** Adds a row (of `row`: NEW or OLD) to its value's day of one equality filter's `column`. */
function valueDayAdded(row: string, column: string): string {
  return `INSERT INTO submission_value_days (account_id, field, value, day, n) VALUES (${row}.account_id, '${column}', ${row}.${column}, ${dayOf(`${row}.created_at`)}, 1)
        ON CONFLICT DO UPDATE SET n = n + 1`;
}

/**
 * The UTC day of an epoch-milliseconds expression, as the migrations since 7 write it into their
 * statements and triggers: a whole number that rounds down before 1970 too (SQLite's integer
 * division rounds toward zero). Frozen: counting.ts's `dayOf`, which the live statements use,
 * must number days the same way.
 */
function dayOf(millis: string): string {
  return `((${millis} - ((${millis} % 86400000) + 86400000) % 86400000) / 86400000)`;
}
