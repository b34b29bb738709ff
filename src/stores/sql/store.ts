/**
 * The store for any SQLite-speaking database, over a `SqlDriver`: libSQL (a file,
 * `:memory:`, Turso) and Cloudflare D1 share every line of it.
 */
import {
  type Account, type ApiKeyListing, type CompleteStore, CSV_PARTS_PER_ROW, type NdjsonPage, type RetentionRule, type SubmissionCursor, type SubmissionPage,
  type SubmissionQuery, type SubmissionWalk, type WebhookStore,
} from "../../store.ts";
import type { Submission, SubmissionStatus } from "../../submission.ts";
import { createdEvent, deletedEvent, pruneEvents, readEvents, readEventTexts, statusChangedEvent } from "./events.ts";
import { joinBytes } from "../../bytes.ts";
import { arrayRows, bytesOf, type SqlDriver, type SqlStatement, type SqlValue } from "./driver.ts";
import { groupCommit } from "./group-commit.ts";
import { createsWrittenTogether, type GroupedCreate } from "./group-creates.ts";
import { keptUntilChange } from "./kept-until-change.ts";
import { readPerTurn } from "./per-turn.ts";
import { readInHalves } from "./read-in-halves.ts";
import { toApiKey, toErasureReceipt } from "./records.ts";
import { identifierLookup, useIdentifyingFields } from "./identifying-fields.ts";
import { importStatements } from "./import.ts";
import {
  dataKeysStatement, type ListStatements, lateListKey, listStatements, pageWithTotal, readLately, rowsWithTotal, statementTexts, walkFoundPage, type WalkRows, walkStatement, type WalkStatement,
  wholePage,
} from "./list-query.ts";
import { migrate, type SchemaUpgrade } from "./migrate.ts";
import { DELIVERIES_OF_PRUNED_EVENTS, sqlWebhookStore } from "./webhooks.ts";
import { randomHex } from "../../hex.ts";
import { type StoredDataKeys, storedDataKeys } from "../stored-data-keys.ts";
import { compareByCodePoint } from "../../text-order.ts";
import {
  arrayToSubmission, holdsLineBreak, joinTimeApart, rowToSubmission, submissionIdOf, SUBMISSION_ARRAY_CURSOR, SUBMISSION_COLUMNS, SUBMISSION_JSON_TIME_APART, SUBMISSION_JSON_TIME_APART_AS_STORED, SUBMISSION_ROW_COLUMN_COUNT, SUBMISSION_ROW_COLUMNS, submissionToRow,
} from "./submission-row.ts";

/** What every SQL-backed store (libSQL, D1) takes beside its connection. */
export interface SqlStoreOptions {
  /**
   * The `data` fields erasure finds submissions by, from an index kept with every write. The
   * database remembers them (`["email"]` at first): given, they replace what it has and the
   * index is rebuilt for the change at open; not given, the database's stay (docs/privacy.md).
   */
  identifyingFields?: readonly string[];
}

/**
 * A store over `driver`, its schema brought up to date first. `close` runs when the store is
 * closed (a driver that owns its connection closes it there).
 */
export async function createSqlStore(
  driver: SqlDriver,
  close: () => void | Promise<void> = () => {},
  options: SqlStoreOptions = {},
): Promise<CompleteStore> {
  return (await openSqlStore(driver, close, options)).store;
}

/** `createSqlStore`, also saying what the migration did (`from` = `to`: nothing): the CLI reports it. */
export async function openSqlStore(
  driver: SqlDriver,
  close: () => void | Promise<void> = () => {},
  options: SqlStoreOptions = {},
): Promise<{ store: CompleteStore; upgrade: SchemaUpgrade }> {
  const upgrade = await migrate(driver);
  const identifyingFields = await useIdentifyingFields(driver, options.identifyingFields);
  return { store: sqlStore(driver, close, identifyingFields), upgrade };
}

/**
 * A walk the counts may not choose: their choice and the total when they chose it
 * (`ListStatements`); without a choice, a walk already chosen and its total.
 */
interface WalkChoice {
  choice: SqlStatement | undefined;
  walkCount: SqlStatement;
}

/** A statement of a list or walk, its text kept for its shape (`statementTexts`) under the name of its part. */
type Kept = (part: string, statement: SqlStatement) => SqlStatement;

function sqlStore(driver: SqlDriver, close: () => void | Promise<void>, identifyingFields: readonly string[]): CompleteStore {
  const texts = statementTexts();
  const merged = readLately();
  const walked = readLately();
  const keptFor = (shape: string): Kept => (part, statement) => texts(shape, part, statement);
  // A walk's page (wholePage; as rows or CSV parts, its values parsed) and where its last row is;
  // undefined for no rows, "ambiguous" for CSV parts whose joined fields do not split (csvPartsPagePlace).
  const readWholePage = async ({ page, shape }: WalkStatement, as: WalkRows, order: "asc" | "desc"): Promise<WholePage | "ambiguous" | undefined> => {
    const separator = as === "rows" || as === "csv parts" ? "," : "lines";
    const row = (await driver.execute(texts(shape, separator, wholePage(page, separator)))).rows[0];
    if (row?.page === null || row?.page === undefined) return undefined;
    if (as === "rows") {
      const rows = JSON.parse(`[${String(row.page)}]`) as unknown[][];
      return { page: rows, rows: rows.length, last: arrayPagePlace(rows, order) };
    }
    if (as === "csv parts") {
      const entries = JSON.parse(`[${String(row.page)}]`) as unknown[];
      const last = csvPartsPagePlace(entries, order);
      return last === undefined ? "ambiguous" : { page: entries, rows: entries.length / CSV_PARTS_PER_ROW, last };
    }
    const { times, last } = pagePlaces(row, order);
    return { page: row.page, rows: times.length, last };
  };
  // A walk's page as one value; a database that limits a value's length (D1: 2 MB) refuses a
  // page of large rows, which is then read in halves (readInHalves).
  const readWalkPage = (accountId: string, walk: SubmissionWalk, as: WalkRows): Promise<WholePage | undefined> => {
    const readPart = async (part: SubmissionWalk) => {
      const read = await readWholePage(walkStatement(accountId, part, as), as, part.order);
      if (read !== "ambiguous") return read;
      // A row's id, popup or domain holds a comma: the part as rows, each in the parts' other
      // form ("", "", "", a time not read, its SUBMISSION_ARRAY).
      const rows = (await readWholePage(walkStatement(accountId, part, "rows"), "rows", part.order)) as WholePage | undefined;
      if (rows === undefined) return undefined;
      return { page: (rows.page as unknown[][]).flatMap((row) => ["", "", "", 0, row]), rows: rows.rows, last: rows.last };
    };
    // `first` is never undefined in `after` and `join`: a half without rows ends the read.
    return readInHalves(walk, readPart, {
      rows: (page) => page?.rows ?? 0,
      after: (part, first) => ({ ...part, after: first!.last }),
      join: (first, rest) => {
        if (rest === undefined) return first;
        const page = Array.isArray(first!.page) ? [...(first!.page as unknown[]), ...(rest.page as unknown[])] : joinBytes(bytesOf(first!.page), bytesOf(rest.page));
        return { page, rows: first!.rows + rest.rows, last: rest.last };
      },
    });
  };
  // Each row's data as stored; a page where a row's holds a raw line break (edited by hand) is
  // read again with the data re-serialised.
  const walkAsNdjson = async (accountId: string, walk: SubmissionWalk): Promise<NdjsonPage> => {
    let read = await readWalkPage(accountId, walk, "lines as stored");
    if (read !== undefined && !oneLinePerRow(bytesOf(read.page), read.rows)) read = await readWalkPage(accountId, walk, "lines");
    return read === undefined ? { bytes: new Uint8Array(0), rows: 0 } : { bytes: bytesOf(read.page), rows: read.rows, last: read.last, fromDatabase: true };
  };
  // A list's page and its total from one snapshot, read by `read`. A walk the counts may not
  // choose (`walk`) is read first; when it was not chosen (its total then reads NaN) or did not
  // find the page (walkFoundPage), the merge is read with the total. A list whose page the merge
  // read lately reads the merge at once, and one whose walk found the page lately reads the walk
  // without the counts' choice (readLately).
  // Each statement's text is kept for the list's shape under its part's name. Lists read lately
  // and the others read through the same call sites: the first list read lately may come long
  // after the list path was compiled (bench/correlated.ts: in the suspects' rounds), and V8
  // throws compiled code away at a call site it has never seen run.
  const readList = async <Read extends { items: readonly unknown[]; total: number }>(
    accountId: string,
    { shape, page, count, merge, choice, walkCount, chosenWalk }: ListStatements,
    query: SubmissionQuery,
    read: (kept: Kept, page: SqlStatement, count: SqlStatement, walk?: WalkChoice) => Promise<Read>,
  ): Promise<Read> => {
    if (merge === undefined) return read(keptFor(`${shape} page`), page, count);
    const key = lateListKey(accountId, query, shape);
    if (!merged.take(key)) {
      const walkedLately = walked.take(key);
      const walk = await read(keptFor(`${shape} ${walkedLately ? "walk chosen" : "walk"}`), walkedLately ? chosenWalk!() : page, count, {
        choice: walkedLately ? undefined : choice!(),
        walkCount: walkedLately ? count : walkCount!,
      });
      if (!Number.isNaN(walk.total) && walkFoundPage(query, walk.items.length, walk.total)) {
        if (!walkedLately) walked.note(key);
        return walk;
      }
      merged.note(key);
    }
    return read(keptFor(`${shape} merge`), merge(), count);
  };
  // A total as read: NaN when the statement gave none (a walk's, when the counts did not choose it).
  const totalOf = (value: unknown) => (value === null ? Number.NaN : Number(value));
  // The page's rows and its total in one read transaction. A walk's rows in one statement, each
  // with the total when the counts chose the walk as a last column (rowToSubmission reads the
  // columns before it): without a row, the merge reads the page.
  const readRowsWithTotal = async (kept: Kept, page: SqlStatement, count: SqlStatement, walk?: WalkChoice) => {
    if (walk !== undefined) {
      const rows = arrayRows(await driver.execute(kept("rows", rowsWithTotal(page, walk.walkCount, walk.choice))));
      return { items: rows, total: rows.length === 0 ? Number.NaN : totalOf(rows[0]!.at(-1)) };
    }
    const [rows, total] = await driver.batch([kept("rows", page), kept("total", count)], "read");
    return { items: arrayRows(rows!), total: totalOf(total!.rows[0]!.total) };
  };
  // The page's JSON texts and its total in one statement (pageWithTotal); a walk's total only
  // when the counts chose it, from the choice the walk reads. `lineBreak`: a text read "json as
  // stored" holds a raw line break (holdsLineBreak), which "json" would have re-serialised.
  const readTextsWithTotal = (order: "asc" | "desc") => async (kept: Kept, page: SqlStatement, count: SqlStatement, walk?: WalkChoice) => {
    const row = (await driver.execute(kept("texts", pageWithTotal(page, walk?.walkCount ?? count, walk?.choice)))).rows[0]!;
    const total = totalOf(row.total);
    if (row.submissions === null || row.submissions === undefined) return { items: [], total, lineBreak: false };
    const joined = String(row.submissions);
    const texts = joined.split("\x1e");
    const times: number[] = [];
    const items = texts.map((text) => joinTimeApart(text, times));
    return { items, total, last: lastInOrder(times, (i) => submissionIdOf(texts[i]!), order), lineBreak: holdsLineBreak(joined) };
  };
  // One submission's row, as `sql` selects it; undefined when the account has no such id.
  const readSubmission = async (sql: string, accountId: string, submissionId: string) => {
    const result = await driver.execute({
      sql,
      args: [accountId, submissionId],
      asArrays: true,
      oneRow: true,
    });
    return arrayRows(result)[0];
  };
  // Creates arrive many at a time: they share commits (see group-commit.ts), and a group's
  // rows, their events and their counts are written by statements of the group (group-creates.ts). No grouped
  // write changes or deletes an existing submission, which that needs: status changes and
  // deletions commit alone.
  const writeGrouped = groupCommit<GroupedCreate>(driver, { around: createsWrittenTogether });
  // Made once per database and never changed: read once per store.
  let hashKey: Promise<string> | undefined;
  const storedKeys = storedDataKeys();
  return {
    async insertSubmission(accountId, s) {
      // One transaction: the row, its data keys (for CSV columns) and its event go in together or not at all.
      const keysHeld = holdsEveryKey(storedKeys, accountId, s);
      const row = { sql: INSERT_SUBMISSION, args: submissionValues(accountId, s) };
      const event = createdEvent(accountId, s, Date.now());
      await writeGrouped([row, ...(keysHeld ? [] : [keepDataKeys(accountId, s)]), event], { row, event });
      if (!keysHeld) storedKeys.add(accountId, writtenKeys(s));
    },
    async getSubmission(accountId, submissionId) {
      const row = await readSubmission(GET_AS_COLUMNS, accountId, submissionId);
      return row && rowToSubmission(row);
    },
    async getSubmissionAsJson(accountId, submissionId) {
      let row = await readSubmission(GET_AS_JSON_AS_STORED, accountId, submissionId);
      // A row edited by hand to hold a raw line break in its data: read again, with data re-serialised.
      if (row !== undefined && holdsLineBreak(String(row[0]))) row = await readSubmission(GET_AS_JSON, accountId, submissionId);
      return row && joinTimeApart(String(row[0]));
    },
    async listSubmissions(accountId, query: SubmissionQuery): Promise<SubmissionPage> {
      const { items, total } = await readList(accountId, listStatements(accountId, query), query, readRowsWithTotal);
      return { items: items.map(rowToSubmission), total };
    },
    async listSubmissionsAsJson(accountId, query) {
      const read = readTextsWithTotal(query.order);
      const { items, total, last, lineBreak } = await readList(accountId, listStatements(accountId, query, "json as stored"), query, read);
      if (!lineBreak) return { items, total, last };
      // A row edited by hand to hold a raw line break in its data: the page again, with data re-serialised.
      const again = await readList(accountId, listStatements(accountId, query, "json"), query, read);
      return { items: again.items, total: again.total, last: again.last };
    },
    async walkSubmissions(accountId, walk) {
      const read = await readWalkPage(accountId, walk, "rows");
      return read === undefined ? [] : (read.page as unknown[][]).map(arrayToSubmission);
    },
    async walkSubmissionsAsCsvParts(accountId, walk) {
      const read = await readWalkPage(accountId, walk, "csv parts");
      if (read === undefined) return { entries: [], rows: 0 };
      const entries = read.page as unknown[];
      for (let i = 0; i < entries.length; i += CSV_PARTS_PER_ROW) {
        // a row as its SUBMISSION_ARRAY (SUBMISSION_CSV_PARTS' other form)
        if (entries[i] === "") entries[i + 4] = arrayToSubmission(entries[i + 4] as unknown[]);
      }
      return { entries, rows: read.rows, last: read.last };
    },
    async walkSubmissionsAsJson(accountId, walk) {
      const page = (await walkAsNdjson(accountId, walk)).bytes;
      // a line holds no raw line break but its end (walkAsNdjson), so the lines split exactly
      return page.byteLength === 0 ? [] : new TextDecoder().decode(page.subarray(0, -1)).split("\n");
    },
    walkSubmissionsAsNdjson: walkAsNdjson,
    async listDataKeys(accountId, filter, limit) {
      const { rows } = await driver.execute(dataKeysStatement(accountId, filter, limit));
      return rows.map((row) => String(row.key));
    },
    async importSubmissions(accountId, submissions) {
      if (submissions.length === 0) return 0;
      // One batch: all of it is inserted, with its counts and events, or none. Of two records
      // with one id, the first wins, as in the insert.
      const firsts = [...new Map(submissions.toReversed().map((s) => [s.submissionId, s])).values()].reverse();
      const { statements, inserted } = importStatements(accountId, firsts, Date.now());
      const results = await driver.batch(statements, "write");
      return Number(results[inserted]!.rows[0]!.inserted);
    },
    async setSubmissionStatus(accountId, submissionId, status: SubmissionStatus) {
      // Setting the current status changes nothing and appends no event.
      const [, , found] = await driver.batch(
        [
          statusChangedEvent(accountId, submissionId, status, Date.now()),
          { sql: "UPDATE submissions SET status = ? WHERE account_id = ? AND id = ? AND status != ?", args: [status, accountId, submissionId, status] },
          { sql: "SELECT 1 AS found FROM submissions WHERE account_id = ? AND id = ?", args: [accountId, submissionId] },
        ],
        "write",
      );
      return found!.rows.length > 0;
    },
    async deleteSubmission(accountId, submissionId, reason = "api") {
      const [, deleted] = await driver.batch(
        [
          deletedEvent(accountId, submissionId, reason, Date.now()),
          { sql: "DELETE FROM submissions WHERE account_id = ? AND id = ?", args: [accountId, submissionId] },
          { sql: "DELETE FROM idempotency_keys WHERE account_id = ? AND submission_id = ?", args: [accountId, submissionId] },
        ],
        "write",
      );
      return deleted!.rowsAffected > 0;
    },
    async deleteSubmissions(accountId, submissionIds, reason) {
      if (submissionIds.length === 0) return [];
      // One batch, so one transaction: each tombstone with its deletion. Each statement within
      // D1's 100 bound values.
      const now = Date.now();
      const tombstones = submissionIds.map((submissionId) => deletedEvent(accountId, submissionId, reason, now));
      const deletions: SqlStatement[] = [];
      for (let from = 0; from < submissionIds.length; from += IDS_PER_STATEMENT) {
        const ids = submissionIds.slice(from, from + IDS_PER_STATEMENT);
        const list = ids.map(() => "?").join(", ");
        deletions.push(
          { sql: `DELETE FROM submissions WHERE account_id = ? AND id IN (${list}) RETURNING id`, args: [accountId, ...ids] },
          { sql: `DELETE FROM idempotency_keys WHERE account_id = ? AND submission_id IN (${list})`, args: [accountId, ...ids] },
        );
      }
      const results = (await driver.batch([...tombstones, ...deletions], "write")).slice(tombstones.length);
      return results.filter((_, i) => i % 2 === 0).flatMap((result) => result.rows.map((row) => String(row.id)));
    },
    identifyingFields,
    async findSubmissionsByIdentifier(accountId, field, value) {
      const { rows } = await driver.execute(identifierLookup(accountId, field, value));
      return rows.map((row) => String(row.submission_id));
    },
    async insertSubmissionOnce(accountId, s, idempotency, now) {
      const record = [accountId, idempotency.key] as const;
      const heldBySubmission = {
        sql: "EXISTS (SELECT 1 FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ? AND submission_id = ?)",
        args: [...record, s.submissionId],
      };
      // One atomic batch, no interactive transaction: the record is inserted unless the key is
      // taken, and the submission only if the record that now holds the key is its own.
      const keysHeld = holdsEveryKey(storedKeys, accountId, s);
      const results = await writeGrouped(
        [
          { sql: "DELETE FROM idempotency_keys WHERE expires_at <= ?", args: [now] },
          {
            sql: `INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, submission_id, submission, expires_at)
                  VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, idempotency_key) DO NOTHING`,
            args: [...record, idempotency.fingerprint, s.submissionId, JSON.stringify(s), idempotency.expiresAt],
          },
          {
            sql: `INSERT INTO submissions (account_id, ${SUBMISSION_ROW_COLUMNS}) SELECT ${PLACEHOLDERS}
                  WHERE EXISTS (SELECT 1 FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ? AND submission_id = ?)`,
            args: [...submissionValues(accountId, s), ...record, s.submissionId],
          },
          {
            sql: "SELECT fingerprint, submission_id, submission FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?",
            args: [...record],
          },
          ...(keysHeld ? [] : [keepDataKeys(accountId, s, heldBySubmission)]),
          createdEvent(accountId, s, now, heldBySubmission),
        ],
        "uncounted",
      );
      const holder = results[3]!.rows[0]!;
      if (String(holder.submission_id) !== s.submissionId) {
        return { inserted: false, fingerprint: String(holder.fingerprint), submission: JSON.parse(String(holder.submission)) as Submission };
      }
      if (!keysHeld) storedKeys.add(accountId, writtenKeys(s));
      return { inserted: true };
    },

    async countRateLimitHit(bucket, windowStart, windowEnd) {
      // Dropping every ended window first is both the cleanup and the reset: a bucket whose
      // window ended has no row, so its new window starts at 1. Counted with the writes that
      // arrive together (a count comes before each create it limits): one commit for all.
      const [, counted] = await writeGrouped(
        [
          { sql: "DELETE FROM rate_limit_counters WHERE window_end <= ?", args: [windowStart] },
          {
            sql: `INSERT INTO rate_limit_counters (bucket, window_start, window_end, hits) VALUES (?, ?, ?, 1)
                  ON CONFLICT (bucket) DO UPDATE SET
                    hits = hits + 1,
                    window_start = MAX(window_start, excluded.window_start),
                    window_end = MAX(window_end, excluded.window_end)
                  RETURNING hits`,
            args: [bucket, windowStart, windowEnd],
          },
        ],
      );
      return Number(counted!.rows[0]!.hits);
    },

    async ensureAccount(name): Promise<Account> {
      const [, selected] = await driver.batch(
        [
          {
            sql: "INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
            args: [crypto.randomUUID(), name, new Date().toISOString()],
          },
          { sql: "SELECT id, name, created_at FROM accounts WHERE name = ?", args: [name] },
        ],
        "write",
      );
      const row = selected!.rows[0]!;
      return { id: String(row.id), name: String(row.name), createdAt: String(row.created_at) };
    },
    async findAccount(name) {
      const { rows } = await driver.execute({ sql: "SELECT id, name, created_at FROM accounts WHERE name = ?", args: [name] });
      const row = rows[0];
      return row && { id: String(row.id), name: String(row.name), createdAt: String(row.created_at) };
    },
    async insertApiKey(key) {
      await driver.execute({
        sql: `INSERT INTO api_keys (id, account_id, kind, hash, domains, created_at, revoked_at)
              VALUES (?, ?, ?, ?, ?, ?, ?)`,
        args: [key.id, key.accountId, key.kind, key.hash, JSON.stringify(key.domains), key.createdAt, key.revokedAt],
      });
    },
    findApiKey: readPerTurn(keptUntilChange(driver, async (keyId: string) => {
      const { rows } = await driver.execute({ sql: "SELECT * FROM api_keys WHERE id = ?", args: [keyId], oneRow: true });
      return rows[0] && toApiKey(rows[0]);
    })),
    async listApiKeys(filter = {}): Promise<ApiKeyListing[]> {
      const { rows } = await driver.execute({
        sql: `SELECT api_keys.*, accounts.name AS account_name FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id
              ${filter.accountName === undefined ? "" : "WHERE accounts.name = ?"}
              ORDER BY api_keys.created_at, api_keys.id`,
        args: filter.accountName === undefined ? [] : [filter.accountName],
      });
      return rows.map((row) => {
        const { hash: _hash, ...key } = toApiKey(row);
        return { ...key, accountName: String(row.account_name) };
      });
    },
    async revokeApiKey(keyId, revokedAt) {
      const { rows } = await driver.execute({
        sql: "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING *",
        args: [revokedAt, keyId],
      });
      return rows[0] && toApiKey(rows[0]);
    },

    readEvents(accountId, query) {
      return readEvents(driver, accountId, query);
    },
    readEventsAsJson(accountId, query) {
      return readEventTexts(driver, accountId, query);
    },
    pruneEvents(before) {
      return pruneEvents(driver, before, [DELIVERIES_OF_PRUNED_EVENTS]);
    },
    ...sqlWebhookStore(driver, writeGrouped),

    async ping() {
      await driver.execute({ sql: "SELECT 1" });
    },

    async insertErasureReceipt(accountId, receipt) {
      await driver.execute({
        sql: `INSERT INTO erasure_receipts (account_id, id, field, value_hash, matched, deleted, submission_ids, requested_at, completed_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [
          accountId, receipt.erasureId, receipt.field, receipt.valueHash, receipt.matched, receipt.deleted,
          JSON.stringify(receipt.submissionIds), receipt.requestedAt, receipt.completedAt,
        ],
      });
    },
    async getErasureReceipt(accountId, erasureId) {
      const { rows } = await driver.execute({ sql: "SELECT * FROM erasure_receipts WHERE account_id = ? AND id = ?", args: [accountId, erasureId] });
      return rows[0] && toErasureReceipt(rows[0]);
    },
    async listErasureReceipts(accountId) {
      const { rows } = await driver.execute({
        sql: "SELECT * FROM erasure_receipts WHERE account_id = ? ORDER BY requested_at, id",
        args: [accountId],
      });
      return rows.map(toErasureReceipt);
    },
    async setRetentionRules(accountId, rules) {
      await driver.execute(
        rules.length === 0
          ? { sql: "DELETE FROM retention_rules WHERE account_id = ?", args: [accountId] }
          : {
              sql: "INSERT INTO retention_rules (account_id, rules) VALUES (?, ?) ON CONFLICT (account_id) DO UPDATE SET rules = excluded.rules",
              args: [accountId, JSON.stringify(rules)],
            },
      );
    },
    async getRetentionRules(accountId) {
      const { rows } = await driver.execute({ sql: "SELECT rules FROM retention_rules WHERE account_id = ?", args: [accountId] });
      return rows[0] ? (JSON.parse(String(rows[0].rules)) as RetentionRule[]) : [];
    },
    async listRetentionRules() {
      const { rows } = await driver.execute({ sql: "SELECT account_id, rules FROM retention_rules ORDER BY account_id" });
      return rows.map((row) => ({ accountId: String(row.account_id), rules: JSON.parse(String(row.rules)) as RetentionRule[] }));
    },
    erasureHashKey() {
      hashKey ??= readOrMakeHashKey(driver).catch((error: unknown) => {
        hashKey = undefined;
        throw error;
      });
      return hashKey;
    },

    async close() {
      await close();
    },
  };
}

/**
 * Adds the submission's data keys to the key list CSV exports take their columns from; run in
 * the batch that inserts the row (and, given `when`, only if that condition holds).
 */
function keepDataKeys(accountId: string, s: Submission, when?: { sql: string; args: SqlValue[] }): SqlStatement {
  return {
    sql: `INSERT OR IGNORE INTO submission_data_keys (account_id, popup_id, key) SELECT ?, ?, key FROM json_each(?)${when ? ` WHERE ${when.sql}` : ""}`,
    args: [accountId, s.popupId, JSON.stringify(s.data), ...(when?.args ?? [])],
  };
}

/**
 * Whether the store has seen every data key of `s` committed for its account and popup; then a
 * create leaves out `keepDataKeys` (../stored-data-keys.ts).
 */
function holdsEveryKey(storedKeys: StoredDataKeys, accountId: string, s: Submission): boolean {
  for (const key in s.data) if (!storedKeys.has(accountId, s.popupId, key)) return false;
  return true;
}

/** The data keys of `s` a commit of it wrote: those JSON keeps (a value JSON.stringify drops is no key of the stored data). */
function writtenKeys(s: Submission): ReadonlyMap<string, string[]> {
  const keys: string[] = [];
  for (const key in s.data) {
    const value = (s.data as Record<string, unknown>)[key];
    if (value !== undefined && typeof value !== "function" && typeof value !== "symbol") keys.push(key);
  }
  return new Map([[s.popupId, keys]]);
}

/** A walk's rows as one value (`wholePage`: as rows, their arrays parsed), how many, and where the last is. */
interface WholePage {
  page: unknown;
  rows: number;
  last: SubmissionCursor;
}

// bench/export.ts (NDJSON): SQLite's search for line breaks in every row's data cost more than this search of the page.
/**
 * Whether a page of lines (each ending with a line feed) holds `rows` line feeds and no
 * carriage return: then no row's data held a raw line break. Through `indexOf` of a number,
 * which on a Node Buffer (the libSQL binding's BLOB of a row read alone, `wholePage`) is a
 * native search for the byte, where a plain Uint8Array's compares byte by byte.
 */
function oneLinePerRow(page: Uint8Array, rows: number): boolean {
  if (page.indexOf(13) !== -1) return false;
  let feeds = 0;
  for (let at = page.indexOf(10); at !== -1 && feeds <= rows; at = page.indexOf(10, at + 1)) feeds++;
  return feeds === rows;
}

/** The values of an INSERT INTO submissions (account_id, SUBMISSION_ROW_COLUMNS). */
function submissionValues(accountId: string, s: Submission): SqlValue[] {
  return [accountId, ...submissionToRow(s)];
}

/** Ids per DELETE: with the account id, within the 100 bound values D1 allows a statement. */
const IDS_PER_STATEMENT = 90;

/** The first process to ask makes the key; every other one reads that one. */
async function readOrMakeHashKey(driver: SqlDriver): Promise<string> {
  const [, selected] = await driver.batch(
    [
      { sql: "INSERT OR IGNORE INTO formsink_settings (name, value) VALUES ('erasure_hash_key', ?)", args: [randomHex(32)] },
      { sql: "SELECT value FROM formsink_settings WHERE name = 'erasure_hash_key'" },
    ],
    "write",
  );
  return String(selected!.rows[0]!.value);
}

// Made once: a statement's text is its key in the driver's cache of prepared statements, and a
// string made anew for each call is hashed anew.
const GET_AS_COLUMNS = `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE account_id = ? AND id = ?`;
/** A submission's JSON text with its time apart, as `joinTimeApart` joins it (SUBMISSION_JSON_TIME_APART). */
const GET_AS_JSON = `SELECT ${SUBMISSION_JSON_TIME_APART} FROM submissions WHERE account_id = ? AND id = ?`;
/** GET_AS_JSON with data as stored (SUBMISSION_JSON_TIME_APART_AS_STORED). */
const GET_AS_JSON_AS_STORED = `SELECT ${SUBMISSION_JSON_TIME_APART_AS_STORED} FROM submissions WHERE account_id = ? AND id = ?`;

const PLACEHOLDERS = Array(SUBMISSION_ROW_COLUMN_COUNT + 1).fill("?").join(", ");

const INSERT_SUBMISSION = `INSERT INTO submissions (account_id, ${SUBMISSION_ROW_COLUMNS}) VALUES (${PLACEHOLDERS})`;

/**
 * The places of a page SQLite aggregated into one row (`wholePage`, `pageWithTotal`): its rows'
 * times, checked to be in the list's order, and where its last row is. Not for an empty page.
 */
function pagePlaces(row: Record<string, unknown>, order: "asc" | "desc"): { times: number[]; last: SubmissionCursor } {
  const times = JSON.parse(String(row.times)) as number[];
  const ids = JSON.parse(String(row.ids)) as string[];
  return { times, last: lastInOrder(times, (i) => ids[i]!, order) };
}

// bench/export.ts (CSV): SQLite aggregating each row's cursor a second time cost more than reading it here.
/** Where the last of a page of parsed SUBMISSION_ARRAYs is, the rows checked to be in the walk's order (`lastInOrder`). */
function arrayPagePlace(rows: readonly unknown[][], order: "asc" | "desc"): SubmissionCursor {
  const { createdAt, submissionId } = SUBMISSION_ARRAY_CURSOR;
  return lastInOrder(rows.map((row) => Number(row[createdAt])), (i) => String(rows[i]![submissionId]), order);
}

/**
 * Where the last of a page of parsed SUBMISSION_CSV_PARTS values is, the rows checked to be in
 * the walk's order (`lastInOrder`); undefined when a row's joined id, popup and domain do not
 * split into three (one of them holds a comma), which the page's readers must be able to do.
 */
function csvPartsPagePlace(entries: readonly unknown[], order: "asc" | "desc"): SubmissionCursor | undefined {
  const times: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < entries.length; i += CSV_PARTS_PER_ROW) {
    const fields = entries[i] as string;
    times.push(entries[i + 3] as number);
    if (fields === "") {
      ids.push(String((entries[i + 4] as unknown[])[SUBMISSION_ARRAY_CURSOR.submissionId]));
      continue;
    }
    const idEnd = fields.indexOf(",");
    if (fields.indexOf(",", fields.indexOf(",", idEnd + 1) + 1) !== fields.length - 1) return undefined;
    ids.push(fields.slice(0, idEnd));
  }
  return lastInOrder(times, (i) => ids[i]!, order);
}

/**
 * Where the last of a page's rows is, given their (created_at, id) cursors (the id of row `i`
 * read by `idOf`, only where it is needed); throws unless they are in the walk's order, as SQL
 * compares them: a page read as one text is in the order SQLite aggregated it (list-query.ts,
 * wholePage), and an engine that ever aggregates otherwise must fail loudly, not export out of
 * order.
 */
function lastInOrder(times: readonly number[], idOf: (row: number) => string, order: "asc" | "desc"): SubmissionCursor {
  for (let i = 1; i < times.length; i++) {
    const [a, b] = order === "asc" ? [i - 1, i] : [i, i - 1];
    // the ids compared only where the times tie: comparing them costs more than the rest of the check
    if (!(times[a]! < times[b]! || (times[a] === times[b] && compareByCodePoint(idOf(a), idOf(b)) < 0))) throw new Error("the database returned a page out of order");
  }
  return { createdAt: times.at(-1)!, submissionId: idOf(times.length - 1) };
}

