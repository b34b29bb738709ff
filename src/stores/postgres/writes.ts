/**
 * Every write to an account's submissions is one call of a function defined here, so one
 * statement: atomic, one round trip, and no transaction held open by the client. (A client-side
 * transaction cut off by a restarting server can crash the process in the postgres package, which
 * then writes to the closed connection; a single statement cannot.)
 *
 * Each function first locks the account's row in `event_heads` (`formsink_lock_head`, or the
 * UPDATE that takes a call of creates' log positions), so an account's writes run one after
 * another whichever server sends them. In a PL/pgSQL function every statement takes a fresh
 * snapshot, so what follows the lock sees everything the account's previous writer committed.
 * That gives the change log positions that grow in commit order, makes an Idempotency-Key raced
 * on two connections store one submission, and fixes the order of locks (the head, then rows and
 * counts), so writers never deadlock. Different accounts never wait for each other. The lock
 * wait is bounded by `p_lock_timeout` (a 503 after it).
 *
 * WRITE_FUNCTIONS are part of migration 1 (migrations.ts). `formsink_insert` is replaced by
 * migrations 3, 4, 6 and 7, each further down this file: the one a server runs is the last,
 * INSERT_COUNTING. None is edited once released; a change is a new migration that replaces the
 * function.
 */

const LOCK_HEAD = `CREATE FUNCTION formsink_lock_head(p_account text, p_lock_timeout text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  INSERT INTO event_heads (account_id, position) VALUES (p_account, 0)
    ON CONFLICT (account_id) DO UPDATE SET position = event_heads.position;
END $$`;

/** Appends one event after the account's newest position; the head is locked. */
const APPEND_EVENT = `CREATE FUNCTION formsink_append_event(
    p_account text, p_now bigint, p_type text, p_popup text, p_submission text, p_event text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  next_position bigint;
BEGIN
  UPDATE event_heads SET position = position + 1 WHERE account_id = p_account RETURNING position INTO next_position;
  INSERT INTO events (account_id, position, type, at, popup_id, submission_id, created_status, event)
    VALUES (p_account, next_position, p_type, p_now, p_popup, p_submission, NULL, p_event);
END $$`;

/**
 * Inserts the rows of $2 (a JSON array of `submissionRecord`s, rows.ts) into account $1 with
 * their created events stamped $3, their data keys $4 and identifiers $5 (worked out by the
 * caller, once per batch: rows.ts); returns the ids inserted, in the given order. A row whose id
 * the account has fails the call, or with `ON CONFLICT` is skipped.
 */
const INSERT_ROWS_BODY = (onConflict: string) => `WITH input AS (
    SELECT * FROM ROWS FROM (json_to_recordset($2::json) AS (
      id text, popup_id text, data text, domain text, user_agent text, device text, status text, created_at bigint, event text))
    WITH ORDINALITY AS r(id, popup_id, data, domain, user_agent, device, status, created_at, event, ord)),
  inserted AS (
    INSERT INTO submissions (account_id, id, popup_id, data, domain, user_agent, device, status, created_at)
    SELECT $1, input.id, input.popup_id, input.data, input.domain, input.user_agent, input.device, input.status, input.created_at
    FROM input ORDER BY input.ord
    ${onConflict} RETURNING submissions.id, submissions.popup_id, submissions.status, submissions.data),
  numbered AS (
    SELECT inserted.*, input.event, row_number() OVER (ORDER BY input.ord) AS n FROM inserted JOIN input ON input.id = inserted.id),
  head AS (
    UPDATE event_heads SET position = event_heads.position + (SELECT COUNT(*) FROM numbered) WHERE event_heads.account_id = $1
    RETURNING event_heads.position - (SELECT COUNT(*) FROM numbered) AS base),
  created AS (
    INSERT INTO events (account_id, position, type, at, popup_id, submission_id, created_status, event)
    SELECT $1, head.base + numbered.n, 'submission.created', $3, numbered.popup_id, numbered.id, numbered.status, numbered.event
    FROM head, numbered),
  data_keys AS (
    INSERT INTO submission_data_keys (account_id, popup_id, key)
    SELECT $1, k.popup_id, k.key FROM json_to_recordset($4::json) AS k(popup_id text, key text) ORDER BY 2, 3 ON CONFLICT DO NOTHING),
  identifiers AS (
    INSERT INTO submission_identifiers (account_id, field, value_key, submission_id)
    SELECT $1, i.field, i.value_key, i.submission_id FROM json_to_recordset($5::json) AS i(field text, value_key text, submission_id text)
    WHERE i.submission_id IN (SELECT numbered.id FROM numbered) ON CONFLICT DO NOTHING)
  SELECT numbered.id FROM numbered ORDER BY numbered.n`;

const INSERT = `CREATE FUNCTION formsink_insert(
    p_account text, p_rows text, p_now bigint, p_data_keys text, p_identifiers text, p_skip_present boolean, p_lock_timeout text)
  RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM formsink_lock_head(p_account, p_lock_timeout);
  IF p_skip_present THEN
    RETURN QUERY ${INSERT_ROWS_BODY("ON CONFLICT (account_id, id) DO NOTHING")};
  ELSE
    RETURN QUERY ${INSERT_ROWS_BODY("")};
  END IF;
END $$`;

/**
 * Stores a submission under an Idempotency-Key unless the account has a live record of the key:
 * then it returns that record's fingerprint and submission (`inserted` false). Drops the
 * account's expired records on the way.
 */
const INSERT_ONCE = `CREATE FUNCTION formsink_insert_once(
    p_account text, p_key text, p_fingerprint text, p_submission_id text, p_submission text, p_expires_at bigint,
    p_now bigint, p_rows text, p_data_keys text, p_identifiers text, p_lock_timeout text)
  RETURNS TABLE (inserted boolean, held_fingerprint text, held_submission text) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM formsink_lock_head(p_account, p_lock_timeout);
  DELETE FROM idempotency_keys WHERE account_id = p_account AND expires_at <= p_now;
  RETURN QUERY SELECT false, k.fingerprint, k.submission FROM idempotency_keys k WHERE k.account_id = p_account AND k.idempotency_key = p_key;
  IF FOUND THEN
    RETURN;
  END IF;
  INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, submission_id, submission, expires_at)
    VALUES (p_account, p_key, p_fingerprint, p_submission_id, p_submission, p_expires_at);
  PERFORM formsink_insert(p_account, p_rows, p_now, p_data_keys, p_identifiers, false, p_lock_timeout);
  RETURN QUERY SELECT true, NULL::text, NULL::text;
END $$`;

/** Sets the status; false when the account has no such submission. A change appends its event, built here as JSON.stringify would. */
const SET_STATUS = `CREATE FUNCTION formsink_set_status(
    p_account text, p_id text, p_status text, p_now bigint, p_event_id text, p_timestamp text, p_lock_timeout text)
  RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  old_popup text;
  old_status text;
BEGIN
  PERFORM formsink_lock_head(p_account, p_lock_timeout);
  SELECT popup_id, status INTO old_popup, old_status FROM submissions WHERE account_id = p_account AND id = p_id;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF old_status <> p_status THEN
    UPDATE submissions SET status = p_status WHERE account_id = p_account AND id = p_id;
    PERFORM formsink_append_event(p_account, p_now, 'submission.status_changed', old_popup, p_id,
      '{"id":"' || p_event_id || '","type":"submission.status_changed","timestamp":"' || p_timestamp || '","data":{"submissionId":'
        || to_json(p_id)::text || ',"popupId":' || to_json(old_popup)::text || ',"status":' || to_json(p_status)::text
        || ',"previousStatus":' || to_json(old_status)::text || '}}');
  END IF;
  RETURN true;
END $$`;

/**
 * Deletes the ids of p_ids (a JSON array) with their idempotency records and identifiers, each
 * with its tombstone (event ids from p_event_ids, one per requested id); returns the ids deleted.
 */
const DELETE = `CREATE FUNCTION formsink_delete(
    p_account text, p_ids text, p_event_ids text, p_reason text, p_now bigint, p_timestamp text, p_lock_timeout text)
  RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM formsink_lock_head(p_account, p_lock_timeout);
  RETURN QUERY WITH requested AS (
      SELECT value AS id, ordinality AS ord FROM json_array_elements_text(p_ids::json) WITH ORDINALITY),
    gone AS (
      DELETE FROM submissions s USING requested r WHERE s.account_id = p_account AND s.id = r.id RETURNING s.id, s.popup_id, s.data, r.ord),
    records AS (
      DELETE FROM idempotency_keys k WHERE k.account_id = p_account AND k.submission_id IN (SELECT gone.id FROM gone)),
    identifiers AS (
      -- By primary key, from the deleted rows' own data: the index needs no second index by submission.
      DELETE FROM submission_identifiers i USING gone, json_each(gone.data::json) AS d
      WHERE i.account_id = p_account AND i.field = d.key AND json_typeof(d.value) = 'string'
        AND i.value_key = formsink_identifier_key(d.key, d.value #>> '{}') AND i.submission_id = gone.id),
    numbered AS (
      SELECT gone.id, gone.popup_id, row_number() OVER (ORDER BY gone.ord) AS n, p_event_ids::json ->> (gone.ord - 1)::int AS event_id FROM gone),
    head AS (
      UPDATE event_heads h SET position = h.position + (SELECT COUNT(*) FROM numbered) WHERE h.account_id = p_account
      RETURNING h.position - (SELECT COUNT(*) FROM numbered) AS base),
    tombstones AS (
      INSERT INTO events (account_id, position, type, at, popup_id, submission_id, created_status, event)
      SELECT p_account, head.base + numbered.n, 'submission.deleted', p_now, numbered.popup_id, numbered.id, NULL,
        '{"id":"' || numbered.event_id || '","type":"submission.deleted","timestamp":"' || p_timestamp || '","data":{"submissionId":'
          || to_json(numbered.id)::text || ',"popupId":' || to_json(numbered.popup_id)::text || ',"reason":' || to_json(p_reason)::text || '}}'
      FROM head, numbered)
    SELECT numbered.id FROM numbered ORDER BY numbered.n;
END $$`;

export const WRITE_FUNCTIONS: readonly string[] = [LOCK_HEAD, APPEND_EVENT, INSERT, INSERT_ONCE, SET_STATUS, DELETE];

/** The start of `formsink_insert` as migrations 3 and 4 replace it. */
const REPLACE_INSERT = `CREATE OR REPLACE FUNCTION formsink_insert(
    p_account text, p_rows text, p_now bigint, p_data_keys text, p_identifiers text, p_skip_present boolean, p_lock_timeout text)
  RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  taken integer;
  base bigint;
BEGIN`;

/**
 * How `formsink_insert` inserts a call that must insert every row (INSERT_TAKING_POSITIONS);
 * `counting` is a CTE (with its trailing comma) that counts the rows' totals, from migration 7.
 */
const insertEveryRow = (counting = "") => `  taken := json_array_length(p_rows::json);
  UPDATE event_heads SET position = position + taken WHERE account_id = p_account RETURNING position - taken INTO base;
  IF NOT FOUND THEN
    -- The account's first write: of two racing, one inserts the head and the other waits for its commit.
    INSERT INTO event_heads (account_id, position) VALUES (p_account, 0) ON CONFLICT (account_id) DO NOTHING;
    UPDATE event_heads SET position = position + taken WHERE account_id = p_account RETURNING position - taken INTO base;
  END IF;
  RETURN QUERY WITH input AS (
      SELECT * FROM ROWS FROM (json_to_recordset(p_rows::json) AS (
        id text, popup_id text, data text, domain text, user_agent text, device text, status text, created_at bigint, event text))
      WITH ORDINALITY AS r(id, popup_id, data, domain, user_agent, device, status, created_at, event, ord)),
    inserted AS (
      INSERT INTO submissions (account_id, id, popup_id, data, domain, user_agent, device, status, created_at)
      SELECT p_account, input.id, input.popup_id, input.data, input.domain, input.user_agent, input.device, input.status, input.created_at
      FROM input ORDER BY input.ord),
    ${counting}created AS (
      INSERT INTO events (account_id, position, type, at, popup_id, submission_id, created_status, event)
      SELECT p_account, base + input.ord, 'submission.created', p_now, input.popup_id, input.id, input.status, input.event FROM input),
    data_keys AS (
      INSERT INTO submission_data_keys (account_id, popup_id, key)
      SELECT p_account, k.popup_id, k.key FROM json_to_recordset(p_data_keys::json) AS k(popup_id text, key text) ORDER BY 2, 3 ON CONFLICT DO NOTHING),
    identifiers AS (
      INSERT INTO submission_identifiers (account_id, field, value_key, submission_id)
      SELECT p_account, i.field, i.value_key, i.submission_id FROM json_to_recordset(p_identifiers::json) AS i(field text, value_key text, submission_id text)
      ON CONFLICT DO NOTHING)
    SELECT input.id FROM input ORDER BY input.ord;`;

/**
 * `formsink_insert` as migration 3 replaces it. A call that must insert every row (a create, or
 * a batch of them) knows how many positions it takes before it inserts: one UPDATE of the head
 * row both locks it and takes them, and the rows and their events are written without reading
 * back what was inserted. An import, which skips the ids the account has, counts what it
 * inserted first, as migration 1's does.
 */
const INSERT_TAKING_POSITIONS = `${REPLACE_INSERT}
  IF p_skip_present THEN
    PERFORM formsink_lock_head(p_account, p_lock_timeout);
    RETURN QUERY ${INSERT_ROWS_BODY("ON CONFLICT (account_id, id) DO NOTHING")};
    RETURN;
  END IF;

  PERFORM set_config('lock_timeout', p_lock_timeout, true);
${insertEveryRow()}
END $$`;

/** Migration 3: creates take their log positions with the lock (INSERT_TAKING_POSITIONS). */
export const INSERT_MIGRATION: readonly string[] = [INSERT_TAKING_POSITIONS];

/**
 * `formsink_insert` as migration 4 replaces it: an import skips the ids the account has by
 * looking them up, not with `ON CONFLICT`. Every insert into `submissions` is made here with
 * the account's head locked, so while this call holds the lock no other transaction can add one
 * of its ids: the lookup is exact, and each row is a plain insert (ON CONFLICT's speculative
 * insertion writes more per row). Knowing its new rows first, it takes their positions and
 * writes their events without reading back what it inserted. `findFresh` keeps the input rows
 * whose id the account does not have: how migrations 4 and 6 differ; `counting` makes the
 * CTE that counts the totals of the rows it is given (`countRows`, from migration 7).
 */
const insertSkippingPresent = (findFresh: string, counting?: (rows: string) => string) => `${REPLACE_INSERT}
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  IF p_skip_present THEN
    PERFORM formsink_lock_head(p_account, p_lock_timeout);
    RETURN QUERY WITH input AS (
        SELECT * FROM ROWS FROM (json_to_recordset(p_rows::json) AS (
          id text, popup_id text, data text, domain text, user_agent text, device text, status text, created_at bigint, event text))
        WITH ORDINALITY AS r(id, popup_id, data, domain, user_agent, device, status, created_at, event, ord)),
      fresh AS (
        SELECT input.*, row_number() OVER (ORDER BY input.ord) AS n FROM input
        ${findFresh}),
      head AS (
        UPDATE event_heads h SET position = h.position + (SELECT COUNT(*) FROM fresh) WHERE h.account_id = p_account
        RETURNING h.position - (SELECT COUNT(*) FROM fresh) AS first),
      inserted AS (
        INSERT INTO submissions (account_id, id, popup_id, data, domain, user_agent, device, status, created_at)
        SELECT p_account, fresh.id, fresh.popup_id, fresh.data, fresh.domain, fresh.user_agent, fresh.device, fresh.status, fresh.created_at
        FROM fresh ORDER BY fresh.n),
      ${counting ? `${counting("fresh")},\n      ` : ""}created AS (
        INSERT INTO events (account_id, position, type, at, popup_id, submission_id, created_status, event)
        SELECT p_account, head.first + fresh.n, 'submission.created', p_now, fresh.popup_id, fresh.id, fresh.status, fresh.event FROM head, fresh),
      data_keys AS (
        INSERT INTO submission_data_keys (account_id, popup_id, key)
        SELECT p_account, k.popup_id, k.key FROM json_to_recordset(p_data_keys::json) AS k(popup_id text, key text) ORDER BY 2, 3 ON CONFLICT DO NOTHING),
      identifiers AS (
        INSERT INTO submission_identifiers (account_id, field, value_key, submission_id)
        SELECT p_account, i.field, i.value_key, i.submission_id FROM json_to_recordset(p_identifiers::json) AS i(field text, value_key text, submission_id text)
        WHERE i.submission_id IN (SELECT fresh.id FROM fresh) ON CONFLICT DO NOTHING)
      SELECT fresh.id FROM fresh ORDER BY fresh.n;
    RETURN;
  END IF;

${insertEveryRow(counting && `${counting("input")},\n    `)}
END $$`;

const INSERT_SKIPPING_PRESENT = insertSkippingPresent("WHERE NOT EXISTS (SELECT 1 FROM submissions s WHERE s.account_id = p_account AND s.id = input.id)");

/** Migration 4: imports skip present ids by lookup (INSERT_SKIPPING_PRESENT). */
export const IMPORT_MIGRATION: readonly string[] = [INSERT_SKIPPING_PRESENT];

/**
 * `formsink_insert` as migration 6 replaces it: an import looks up each of its ids by the
 * primary key, one probe a row. Migration 4's NOT EXISTS is an anti-join the planner may run
 * as a hash of every id the account has, which PL/pgSQL's cached generic plan does once the
 * function has run a few times in a session: each batch then read the whole account, so an
 * import slowed as the account grew. A LATERAL subquery with LIMIT cannot be turned into a
 * join: the probe is a nested loop over the batch whatever the plan. Otherwise as migration 4.
 */
const PROBE_FOR_PRESENT = `LEFT JOIN LATERAL (SELECT true AS found FROM submissions s WHERE s.account_id = p_account AND s.id = input.id LIMIT 1) AS present ON true
        WHERE present.found IS NULL`;
const INSERT_PROBING_PRESENT = insertSkippingPresent(PROBE_FOR_PRESENT);

/** Migration 6: imports probe for present ids row by row (INSERT_PROBING_PRESENT). */
export const PROBE_MIGRATION: readonly string[] = [INSERT_PROBING_PRESENT];

/**
 * The upsert of the maintained totals for the rows of `source` (a CTE of the statement with
 * popup_id, domain, device and status), groups in key order as the trigger of migration 1 does.
 */
const countRows = (source: string) => `counted AS (
      INSERT INTO submission_counts AS c (account_id, popup_id, domain, device, status, n)
      SELECT p_account, ${source}.popup_id, ${source}.domain, ${source}.device, ${source}.status, COUNT(*) FROM ${source}
      GROUP BY 2, 3, 4, 5 ORDER BY 2, 3, 4, 5
      ON CONFLICT (account_id, popup_id, domain, device, status) DO UPDATE SET n = c.n + excluded.n)`;

/**
 * `formsink_insert` as migration 7 replaces it: the rows' totals are counted by the insert's
 * own statement, not by the statement-level trigger migration 7 drops (what that trigger cost a
 * call of creates: its transition table of the new rows and a PL/pgSQL call). Every insert into
 * `submissions` is made here; deletes and status changes keep their triggers. Otherwise as
 * migration 6.
 */
const INSERT_COUNTING = insertSkippingPresent(PROBE_FOR_PRESENT, countRows);

/** Migration 7: inserts count their rows' totals themselves; the insert trigger goes (INSERT_COUNTING). */
export const COUNTING_MIGRATION: readonly string[] = [INSERT_COUNTING, "DROP TRIGGER submissions_counted_on_insert ON submissions"];
