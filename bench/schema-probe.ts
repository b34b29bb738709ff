/**
 * Schema probe (issue 18, target 8): what the submissions table's layout costs a bulk import, a
 * group of creates, a list and a get, measured before any migration is written. Not part of
 * `npm run bench`.
 *
 *   node --import tsx bench/schema-probe.ts [--rows=200000] [--upgrade=<copy of a 1,000,000-row file>]
 *
 * Four files in /tmp, each driven by the SQL store's own code (`createSqlStore` on the libSQL
 * binding's synchronous connection, every commit synced) through a driver that adapts its
 * statements to the file's layout:
 * - current: the real migrations on a fresh file.
 * - intkey: the same schema with every `account_id` an INTEGER (the account's number, bound
 *   where the store binds the account's id): narrower entries in every index and table of counts.
 * - clustered: `submissions` WITHOUT ROWID, keyed by (account_id, created_at, id), so the table
 *   is the time index; a unique index on (account_id, id) for gets and the import's conflict
 *   check. Without rowids an import cannot find its rows as a range of rowids (migration 11), so
 *   its rows go first into a plain table (`submission_import_rows`), the ids already stored are
 *   taken out of it, and the rows, counts, identifiers and events are all written from it.
 * - both: clustered with integer account keys.
 * - staged: the current schema, its import going through submission_import_rows as the
 *   clustered layouts' does: what that detour costs, apart from the table's layout.
 * The same rows (bench/support/dataset.ts) go into all four a batch at a time, the layouts
 * taking turns, so the machine's drift falls on each alike; CPU is `process.cpuUsage` around
 * each call. Then, in turns too: groups of 10 creates, http.ts's list (popup and status, page 1
 * and total), a dated list with two equality filters, and a get by id.
 *
 * With `--upgrade=<file>` it instead times rebuilding that file's `submissions` into the
 * clustered layout (the statements a migration would run), on the file given: pass a copy.
 */
import Database from "libsql";
import { rmSync, statSync } from "node:fs";
import { openLibsqlFile } from "../src/stores/libsql/file.ts";
import type { SqlDriver, SqlStatement, SqlValue } from "../src/stores/sql/driver.ts";
import { importStatements } from "../src/stores/sql/import.ts";
import { createSqlStore } from "../src/stores/sql/store.ts";
import type { CompleteStore } from "../src/store.ts";
import type { Submission } from "../src/submission.ts";
import { DATASET_SPAN_MS, DATASET_START, DEVICES, generateSubmissions, POPUPS, STATUSES } from "./support/dataset.ts";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const ROWS = Number(arg("rows") ?? 200_000);
const ROUNDS = Number(arg("rounds") ?? 30);
const BATCH = 5000; // bench/store.ts's import batch
const ACCOUNT = "3f1c9a52-7d4e-4b8a-9c21-0e6f5a7b8c9d"; // 36 characters, as the store's account ids
const ACCOUNT_KEY = 1;

interface Layout {
  name: string;
  intKey: boolean;
  clustered: boolean;
  /** The import's rows go through submission_import_rows, as a clustered table's must. */
  staged?: true;
}
const LAYOUTS: Layout[] = [
  { name: "current", intKey: false, clustered: false },
  { name: "staged", intKey: false, clustered: false, staged: true },
  { name: "intkey", intKey: true, clustered: false },
  { name: "clustered", intKey: false, clustered: true },
  { name: "both", intKey: true, clustered: true },
];

/** The clustered table, as a migration would create it (columns as migration 1's). */
const CLUSTERED_TABLE = (accountType: string) => `CREATE TABLE submissions (
      account_id ${accountType} NOT NULL,
      id TEXT NOT NULL,
      popup_id TEXT NOT NULL,
      domain TEXT NOT NULL,
      device TEXT NOT NULL,
      user_agent TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'completed')),
      created_at INTEGER NOT NULL,
      data TEXT NOT NULL,
      PRIMARY KEY (account_id, created_at, id)
    ) WITHOUT ROWID`;
const BY_ID = "CREATE UNIQUE INDEX submissions_by_id ON submissions (account_id, id)";
const IMPORT_ROWS = (accountType: string) =>
  `CREATE TABLE submission_import_rows (account_id ${accountType} NOT NULL, id TEXT NOT NULL, popup_id TEXT NOT NULL, domain TEXT NOT NULL,
    device TEXT NOT NULL, user_agent TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL, data TEXT NOT NULL)`;

const path = (layout: Layout) => `/tmp/schema-probe-${layout.name}.db`;
const remove = (file: string) => {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
};

/** The current schema's statements (tables, then indexes, then triggers) and its few rows. */
function schemaOf(file: string) {
  const db = new Database(file);
  const order = { table: 0, index: 1, trigger: 2 } as Record<string, number>;
  const objects = (db.prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'").all() as { type: string; name: string; sql: string }[])
    .sort((a, b) => order[a.type]! - order[b.type]!);
  const rows = ["formsink_migrations", "identifying_fields", "formsink_settings"].map((table) => ({ table, rows: db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[] }));
  db.close();
  return { objects, rows };
}

/** `layout`'s schema from the current one: what a migration to it would leave. */
function buildLayout(layout: Layout, schema: ReturnType<typeof schemaOf>) {
  const accountType = layout.intKey ? "INTEGER" : "TEXT";
  const db = new Database(path(layout));
  db.exec("PRAGMA journal_mode = WAL");
  for (const { type, name, sql } of schema.objects) {
    let text = layout.intKey ? sql.replace(/account_id TEXT/g, "account_id INTEGER") : sql;
    if (layout.clustered && type === "table" && name === "submissions") text = CLUSTERED_TABLE(accountType);
    if (layout.clustered && name === "submissions_by_time") continue; // the table is the time index
    db.exec(text);
  }
  if (layout.clustered) db.exec(BY_ID);
  if (layout.clustered || layout.staged) db.exec(IMPORT_ROWS(accountType));
  for (const { table, rows } of schema.rows) {
    for (const row of rows) {
      const columns = Object.keys(row);
      db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).run(Object.values(row));
    }
  }
  db.close();
}

const NEW_ROWS = "submissions.rowid > (SELECT rowid_before FROM submission_import)";
const ROWID_OF_CREATED = "(SELECT rowid FROM submissions WHERE account_id = ? AND id = ?)";

/** The store's statement, adapted to `layout` (see the top of the file). */
function adapt(layout: Layout, statement: SqlStatement): SqlStatement[] {
  let { sql, args } = statement;
  if (layout.intKey && args) args = args.map((value) => (value === ACCOUNT ? ACCOUNT_KEY : value));
  if (!layout.clustered && !layout.staged) return [{ ...statement, sql, args }];
  sql = sql.replace(/ INDEXED BY submissions_by_time/g, layout.clustered ? "" : " INDEXED BY submissions_by_time");
  if (layout.clustered && sql.includes(ROWID_OF_CREATED)) {
    // A created event's rowid link (migration 14): there are no rowids.
    sql = sql.replace(ROWID_OF_CREATED, "NULL");
    args = [...args!.slice(0, 6), ...args!.slice(8)];
  }
  if (sql.startsWith("INSERT INTO submission_import (rowid_before) SELECT")) {
    return [{ sql: "INSERT INTO submission_import (rowid_before) VALUES (0)" }];
  }
  if (sql.startsWith("INSERT INTO submissions (account_id,") && sql.includes("json_each(?)")) {
    return [{ ...statement, sql: sql.replace("INSERT INTO submissions", "INSERT INTO submission_import_rows").replace(/ON CONFLICT[^]*$/, ""), args }];
  }
  if (sql.startsWith("SELECT COUNT(*) AS inserted FROM submissions WHERE")) {
    // The import's rows are in submission_import_rows: the ids already stored leave it, the rest go in.
    return [
      { sql: `DELETE FROM submission_import_rows WHERE EXISTS (SELECT 1 FROM submissions WHERE submissions.account_id = submission_import_rows.account_id AND submissions.id = submission_import_rows.id)` },
      { sql: `INSERT INTO submissions (account_id, id, popup_id, data, domain, user_agent, device, status, created_at)
              SELECT account_id, id, popup_id, data, domain, user_agent, device, status, created_at FROM submission_import_rows ORDER BY rowid` },
      { sql: "SELECT COUNT(*) AS inserted FROM submission_import_rows" },
    ];
  }
  if (sql.includes(NEW_ROWS)) {
    sql = sql
      .replace(/FROM submissions WHERE /, "FROM submission_import_rows AS submissions WHERE ")
      .replace(/FROM submissions, /, "FROM submission_import_rows AS submissions, ")
      .replace(NEW_ROWS, "true")
      .replace("|| ?, rowid\n", "|| ?, NULL\n");
  }
  if (sql === "DELETE FROM submission_import") return [{ sql: "DELETE FROM submission_import_rows" }, { sql }];
  return [{ ...statement, sql, args }];
}

/** A driver that adapts every statement and keeps each result where the store expects it. */
function adaptingDriver(layout: Layout, inner: SqlDriver): SqlDriver {
  const adaptAll = (statements: readonly SqlStatement[]) => {
    const out: SqlStatement[] = [];
    const positions: number[] = [];
    for (const statement of statements) {
      const adapted = adapt(layout, statement);
      out.push(...adapted);
      positions.push(out.length - 1); // the last of each group answers for it
    }
    return { out, positions };
  };
  return {
    execute: async (statement) => {
      const { out } = adaptAll([statement]);
      if (out.length === 1) return inner.execute(out[0]!);
      return (await inner.batch(out, "write")).at(-1)!;
    },
    batch: async (statements, mode) => {
      const { out, positions } = adaptAll(statements);
      const results = await inner.batch(out, mode);
      return positions.map((i) => results[i]!);
    },
  };
}

interface Opened {
  layout: Layout;
  store: CompleteStore;
  cpu: Record<string, number[]>; // microseconds per unit, per call
}

async function open(layout: Layout): Promise<Opened> {
  const connection = openLibsqlFile(path(layout), { synchronous: true });
  const store = await createSqlStore(adaptingDriver(layout, connection.driver), connection.close);
  return { layout, store, cpu: {} };
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function timed(opened: Opened, what: string, units: number, run: () => Promise<unknown>) {
  const started = cpuMicros();
  await run();
  (opened.cpu[what] ??= []).push((cpuMicros() - started) / units);
}

/** A statement's label in the breakdown: its first words. */
function label(sql: string): string {
  const text = sql.replace(/\s+/g, " ");
  const field = /SELECT \?, '(\w+)'/.exec(text)?.[1];
  return (text.slice(0, 56) + (field ? ` (${field})` : "")).trim();
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

async function probe() {
  for (const layout of LAYOUTS) remove(path(layout));
  const current = await open(LAYOUTS[0]!); // the real migrations
  const schema = schemaOf(path(LAYOUTS[0]!));
  const opened = [current];
  for (const layout of LAYOUTS.slice(1)) {
    buildLayout(layout, schema);
    opened.push(await open(layout));
  }

  const rows = [...generateSubmissions(ROWS, 11)];
  console.log(`schema probe: ${ROWS.toLocaleString("en-US")} rows in batches of ${BATCH}, layouts taking turns; Node ${process.version}`);
  // The import on the binding itself, statement by statement, so that each statement's CPU is
  // seen: the store's own statements (importStatements), adapted to the layout, in one
  // transaction on a connection set up as the store's (file.ts).
  const raw = opened.map((o) => {
    const db = new Database(path(o.layout));
    db.exec("PRAGMA synchronous = FULL; PRAGMA secure_delete = ON; PRAGMA cache_size = -32768");
    return { o, db, prepared: new Map<string, ReturnType<typeof db.prepare>>(), parts: new Map<string, number>() };
  });
  for (let start = 0; start < rows.length; start += BATCH) {
    const batch = rows.slice(start, start + BATCH);
    // Each batch's turn starts with a different layout, so none always follows the same one.
    for (let k = 0; k < raw.length; k++) {
      const r = raw[(k + start / BATCH) % raw.length]!;
      const part = (label: string, since: number) => {
        const now = cpuMicros();
        r.parts.set(label, (r.parts.get(label) ?? 0) + (now - since) / ROWS);
        return now;
      };
      await timed(r.o, "import", batch.length, async () => {
        let t = cpuMicros();
        const { statements, inserted } = importStatements(ACCOUNT, batch, Date.now());
        const adapted = statements.flatMap((s, i) => adapt(r.o.layout, s).map((a, j, all) => ({ ...a, counts: i === inserted && j === all.length - 1 })));
        t = part("statements built (JSON of the rows)", t);
        r.db.exec("BEGIN IMMEDIATE");
        t = part("BEGIN", t);
        let count = -1;
        for (const statement of adapted) {
          let prepared = r.prepared.get(statement.sql);
          if (prepared === undefined) r.prepared.set(statement.sql, (prepared = r.db.prepare(statement.sql)));
          if (statement.counts) count = Number((prepared.get((statement.args ?? []) as SqlValue[]) as { inserted: number }).inserted);
          else if (prepared.reader) prepared.all((statement.args ?? []) as SqlValue[]);
          else prepared.run((statement.args ?? []) as SqlValue[]);
          t = part(label(statement.sql), t);
        }
        r.db.exec("COMMIT");
        part("COMMIT", t);
        if (count !== batch.length) throw new Error(`${r.o.layout.name}: ${count} of ${batch.length} inserted`);
      });
    }
  }
  for (const r of raw) r.db.close();
  // The same rows again through the store: every id is already there, nothing goes in.
  for (const o of opened) {
    const inserted = await o.store.importSubmissions(ACCOUNT, rows.slice(0, BATCH));
    if (inserted !== 0) throw new Error(`${o.layout.name}: re-import inserted ${inserted}`);
  }

  const template = rows[0]!;
  let serial = 0;
  const create = (): Submission => {
    serial++;
    const millis = DATASET_START + DATASET_SPAN_MS + serial;
    return { ...template, submissionId: `${millis.toString(16).padStart(12, "0")}-7000-7000-8000-${serial.toString(16).padStart(12, "0")}`, createdAt: new Date(millis).toISOString() };
  };
  const lists = POPUPS.flatMap((popupId) => STATUSES.map((status) => ({ popupId, status, order: "desc" as const, limit: 10, offset: 0 })));
  const month = 30 * 86_400_000;
  const dated = POPUPS.flatMap((popupId, i) =>
    DEVICES.slice(0, 2).map((device) => ({ popupId, device, createdAfter: DATASET_START + (i + 1) * month + 12_345, createdBefore: DATASET_START + (i + 2) * month - 6_789, order: "desc" as const, limit: 10, offset: 0 })),
  );
  const ids = Array.from({ length: 200 }, (_, i) => rows[Math.floor((i * 7919 * 31) % rows.length)]!.submissionId);
  const answers = new Map<string, string>();
  const same = (key: string, value: string) => {
    const seen = answers.get(key);
    if (seen === undefined) answers.set(key, value);
    else if (seen !== value) throw new Error(`layouts disagree on ${key}`);
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < opened.length; k++) {
      const o = opened[(k + round) % opened.length]!;
      if (round > 0) await timed(o, "create, 10 at a time", 10, () => Promise.all(Array.from({ length: 10 }, () => o.store.insertSubmission(ACCOUNT, create()))));
      await timed(o, "list popup+status, page 1 + total", lists.length, async () => {
        for (const query of lists) {
          const page = await o.store.listSubmissionsAsJson!(ACCOUNT, query);
          if (round === 0) same(`list ${JSON.stringify(query)}`, JSON.stringify(page));
        }
      });
      await timed(o, "list popup+device+month, page 1 + total", dated.length, async () => {
        for (const query of dated) {
          const page = await o.store.listSubmissionsAsJson!(ACCOUNT, query);
          if (round === 0) same(`dated ${JSON.stringify(query)}`, JSON.stringify(page));
        }
      });
      await timed(o, "get by id", ids.length, async () => {
        for (const id of ids) {
          const json = await o.store.getSubmissionAsJson!(ACCOUNT, id);
          if (round === 0) same(`get ${id}`, String(json));
        }
      });
    }
  }
  for (const o of opened) await o.store.close();

  const whats = Object.keys(opened[0]!.cpu);
  const name = (w: string) => (w === "import" ? "import (CPU per row, mean of batches)" : `${w} (CPU per call, median of rounds)`);
  console.log(`\n${"us of CPU".padEnd(66)}${opened.map((o) => o.layout.name.padStart(11)).join("")}`);
  for (const what of whats) {
    const values = opened.map((o) => (what === "import" ? mean(o.cpu[what]!) : median(o.cpu[what]!)));
    console.log(`${name(what).padEnd(66)}${values.map((v) => v.toFixed(1).padStart(11)).join("")}`);
  }
  console.log(`\nimport, us of CPU per row by statement`);
  const labels = [...new Set(raw.flatMap((r) => [...r.parts.keys()]))];
  for (const l of labels) console.log(`  ${l.padEnd(64)}${raw.map((r) => (r.parts.has(l) ? r.parts.get(l)!.toFixed(2) : "-").padStart(11)).join("")}`);
  const first = opened.map((o) => mean(o.cpu.import!.slice(0, o.cpu.import!.length / 2)));
  const last = opened.map((o) => mean(o.cpu.import!.slice(o.cpu.import!.length / 2)));
  console.log(`${"import, first half of the rows".padEnd(66)}${first.map((v) => v.toFixed(1).padStart(11)).join("")}`);
  console.log(`${"import, second half of the rows".padEnd(66)}${last.map((v) => v.toFixed(1).padStart(11)).join("")}`);
  const size = (layout: Layout) => {
    const db = new Database(path(layout));
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    return statSync(path(layout)).size / 1e6;
  };
  console.log(`${"file size, MB".padEnd(66)}${LAYOUTS.map((l) => size(l).toFixed(1).padStart(11)).join("")}`);
  for (const layout of LAYOUTS) remove(path(layout));
}

/** Rebuilds `file`'s submissions into the clustered layout, timed: what a migration would run. */
function upgrade(file: string) {
  const db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA cache_size = -32768");
  const count = (db.prepare("SELECT COUNT(*) AS n FROM submissions").get() as { n: number }).n;
  const triggers = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'submissions'").all() as { sql: string }[]).map((r) => r.sql);
  const indexes = (db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'submissions' AND sql IS NOT NULL").all() as { name: string; sql: string }[])
    .filter((i) => i.name !== "submissions_by_time").map((i) => i.sql);
  const wall = performance.now();
  const cpu = cpuMicros();
  db.exec("BEGIN IMMEDIATE");
  db.exec(CLUSTERED_TABLE("TEXT").replace("CREATE TABLE submissions", "CREATE TABLE submissions_clustered"));
  db.exec(`INSERT INTO submissions_clustered (account_id, id, popup_id, domain, device, user_agent, status, created_at, data)
    SELECT account_id, id, popup_id, domain, device, user_agent, status, created_at, data FROM submissions ORDER BY account_id, created_at, id`);
  const copied = performance.now();
  db.exec("DROP TABLE submissions");
  db.exec("ALTER TABLE submissions_clustered RENAME TO submissions");
  db.exec(BY_ID);
  for (const sql of indexes) db.exec(sql);
  for (const sql of triggers) db.exec(sql);
  db.exec(IMPORT_ROWS("TEXT"));
  db.exec("UPDATE events SET submission_rowid = NULL WHERE submission_rowid IS NOT NULL");
  db.exec("COMMIT");
  const done = performance.now();
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const checkpointed = performance.now();
  db.close();
  console.log(`upgrade of ${count.toLocaleString("en-US")} rows to the clustered layout: ${((done - wall) / 1000).toFixed(1)} s in the transaction ` +
    `(copy ${((copied - wall) / 1000).toFixed(1)} s), ${((cpuMicros() - cpu) / 1e6).toFixed(1)} s of CPU, checkpoint ${((checkpointed - done) / 1000).toFixed(1)} s; ` +
    `${(statSync(file).size / 1e6).toFixed(0)} MB after`);
}

const upgradeFile = arg("upgrade");
if (upgradeFile !== undefined) upgrade(upgradeFile);
else await probe();
