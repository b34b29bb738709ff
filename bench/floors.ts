/**
 * The floors under issue 6's HTTP targets (1-3) and bulk load target (8): what the least a server
 * or a loader can do on this machine with the tools formsink must use reaches, measured the way
 * http.ts and store.ts measure formsink. A floor that misses its target puts the target out of
 * reach of any implementation here.
 *
 * HTTP: support/floor-server.ts (node:http, the same `libsql` binding, statements prepared once,
 * the key compared with one kept in memory; the list's page by one statement and its total from
 * the maintained counts; get by primary key; a durable create with group commit), formsink
 * through `formsink/node` (support/export-server.ts) and the raw node:http server
 * (support/bridge-server.ts), each in its own process on core 0, each on a copy of http.ts's
 * 100,000-row file; autocannon here on core 1, 10 keep-alive connections, a 5 s warm-up before
 * each window. The windows go in rounds (raw GET, floor and formsink list, the floor's list
 * answer fixed, the same for get), then the creates' rounds (raw POST, floor and formsink
 * create), each share of the same round's raw window; each figure is the median of the rounds'.
 *
 * Bulk load: the NDJSON file of store.ts's 1,000,000 submissions into a fresh file with formsink's
 * schema (what its migrations create), and into the same file with pieces taken away (the count
 * triggers, the secondary indexes), each in two ways: Debian's `sqlite3` shell reading a SQL file
 * of multi-row INSERTs (made from the NDJSON before the clock starts), and this process through
 * the binding (reading and parsing the NDJSON as store.ts does, one prepared 100-row INSERT).
 * Both: transactions of 100,000 rows, WAL, `synchronous = FULL`, a 256 MB page cache, pinned to
 * core 0; rows/s of the wall time and CPU per row (the shell's, or this process's).
 *
 *   node --import tsx bench/floors.ts [--quick] [--part=http|load] [--only=list|get|create] [--rounds=<n>] [--profile=<dir>]
 *
 * `--quick`: 3 s windows on 20,000 submissions, one round; 100,000 rows loaded. `--only`: the HTTP
 * windows of that workload (and its raw one). `--profile`: the
 * floor and formsink servers write V8 CPU profiles there (bench/support/profile-top.ts reads them).
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { closeSync, copyFileSync, createReadStream, existsSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import type { Submission } from "../src/submission.ts";
import { createRequest, DATA_DIR, httpDatabase, listRequests, type Measured, measure, workingCopy } from "./support/http-setup.ts";
import { canPin, formatTable, type LoadOptions, pinSelf, startServerProcess, stopServerProcess } from "./support/load.ts";
import { reportTargets, type TargetFigure } from "./support/targets.ts";
import { median } from "./support/timing.ts";

const quick = process.argv.includes("--quick");
const part = process.argv.find((arg) => arg.startsWith("--part="))?.slice("--part=".length);
const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length);
const profileDir = process.argv.find((arg) => arg.startsWith("--profile="))?.slice("--profile=".length);
const ROWS = quick ? 20_000 : 100_000;
const SECONDS = quick ? 3 : 10;
const ROUNDS = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice("--rounds=".length) ?? (quick ? 1 : 3));
const LOAD_ROWS = quick ? 100_000 : 1_000_000;
const NDJSON = `${DATA_DIR}submissions-1000000.ndjson`;

const figures: TargetFigure[] = [];
const headline: string[] = [];
const percent = (fraction: number) => `${(100 * fraction).toFixed(0)}%`;
const workDir = mkdtempSync(join(tmpdir(), "formsink-bench-floors-"));

async function httpFloors(): Promise<void> {
  pinSelf(1);
  console.log(
    `HTTP: Node ${process.version}; ${canPin() ? "servers on core 0, load on core 1" : "taskset unavailable: not pinned"}; ` +
      `${SECONDS} s per window, ${ROUNDS} round${ROUNDS === 1 ? "" : "s"}, 10 connections; libSQL file with ${ROWS.toLocaleString("en-US")} submissions\n`,
  );
  const { path: database, key, ids } = await httpDatabase(ROWS);
  let nextId = 0;
  const getLoad = {
    requests: [{
      method: "GET" as const,
      headers: { "x-api-key": key },
      setupRequest: (request: object) => {
        nextId = (nextId + 7919) % ids.length; // http.ts's walk: every id, in no index order
        return { ...request, path: `/api/submission/${ids[nextId]}` };
      },
    }],
  };
  const createLoad = createRequest(key);
  const loads: Record<string, Omit<LoadOptions, "url" | "durationSeconds">> = {
    "raw GET": {},
    "raw POST": { method: "POST", headers: createLoad.headers, body: createLoad.body },
    list: { requests: listRequests(key) },
    "list answer": { requests: [{ method: "GET", path: "/fixed/list", headers: { "x-api-key": key } }] },
    "get answer": { requests: [{ method: "GET", path: "/fixed/get", headers: { "x-api-key": key } }] },
    get: getLoad,
    create: { requests: [createLoad] },
  };
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const servers: Record<string, { url: string; child: ChildProcess }> = {};
  try {
    servers.raw = await startServerProcess(new URL("./support/bridge-server.ts", import.meta.url), ["raw node:http"], 0);
    servers.floor = await startServerProcess(new URL("./support/floor-server.ts", import.meta.url), [workingCopy(database, join(workDir, "floor.db")), key], 0, profile);
    servers.formsink = await startServerProcess(new URL("./support/export-server.ts", import.meta.url), [workingCopy(database, join(workDir, "formsink.db"))], 0, profile);
    // Each round's windows, in this order; every server but the loaded one sits idle meanwhile.
    const allWindows = [
      ["raw", "raw GET"],
      ["floor", "list"],
      ["formsink", "list"],
      ["floor", "list answer"],
      ["floor", "get"],
      ["formsink", "get"],
      ["floor", "get answer"],
      ["raw", "raw POST"],
      ["floor", "create"],
      ["formsink", "create"],
    ] as const;
    const windows = allWindows.filter(([server, load]) => only === undefined || (server === "raw" ? (load === "raw POST") === (only === "create") : load.startsWith(only)));
    const measured = new Map<string, Measured[]>();
    // The reads' rounds first, then the creates': the creates add rows at the top of one
    // popup's index, which a page for its other status then steps over (the floor's list has
    // no choice of index to avoid them, formsink's has), so reads after creates would measure
    // a larger file each round.
    const creates = (load: string) => load === "create" || load === "raw POST";
    for (const phase of [windows.filter(([, load]) => !creates(load)), windows.filter(([, load]) => creates(load))]) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const [server, load] of phase) {
          const name = `${server} ${load}`.replace("raw raw", "raw");
          const result = await measure(name, loads[load]!, servers[server]!.url, servers[server]!.child.pid!, SECONDS);
          measured.set(name, [...(measured.get(name) ?? []), result]);
        }
      }
    }
    const rawOf = (load: string) => (load === "create" ? "raw POST" : "raw GET");
    const rows: string[][] = [];
    const shares = new Map<string, number>();
    /** The raw window's server CPU per request over this one's: the share of raw a saturated core gives, steadier than rates on a busy machine. */
    const cpuShares = new Map<string, number>();
    for (const [name, results] of measured) {
      const [server, load] = name.split(" ") as [string, string];
      const raw = measured.get(rawOf(load))!;
      const share = server === "raw" ? 1 : median(results.map((r, round) => r.requestsPerSecond / raw[round]!.requestsPerSecond));
      shares.set(name, share);
      cpuShares.set(name, server === "raw" ? 1 : median(results.map((r, round) => raw[round]!.serverMicros / r.serverMicros)));
      rows.push([
        name,
        results.map((r) => r.requestsPerSecond.toFixed(0)).join(" / "),
        server === "raw" ? "" : percent(share),
        server === "raw" ? "" : percent(cpuShares.get(name)!),
        median(results.map((r) => r.p99Ms)).toFixed(1),
        results.map((r) => r.serverMicros.toFixed(1)).join(" / "),
      ]);
    }
    console.log(
      `\n${formatTable(["window", "req/s by round", "vs raw", "by CPU", "p99 ms", "server CPU us/req by round"], rows)}\n\n` +
        "Each share is the median of the rounds' shares of the same round's raw window (raw GET for list and get, raw POST for create): " +
        "`vs raw` of its rate, `by CPU` the raw window's server CPU per request over this one's.\n",
    );
    const kinds = ["event loop", "libSQL", "V8 and Node", "exited"];
    console.log(
      `server CPU us/req by thread (median of the rounds)\n${formatTable(
        ["window", ...kinds],
        [...measured].map(([name, results]) => [name, ...kinds.map((kind) => median(results.map((r) => r.threadMicros[kind] ?? 0)).toFixed(1))]),
      )}\n`,
    );
    const goals = { list: 0.5, get: 0.6, create: 0.35 } as const;
    for (const load of (["list", "get", "create"] as const).filter((load) => only === undefined || load === only)) {
      const floor = shares.get(`floor ${load}`)!;
      const formsink = shares.get(`formsink ${load}`)!;
      const floorByCpu = cpuShares.get(`floor ${load}`)!;
      figures.push({ target: { list: 1, get: 2, create: 3 }[load], what: `floor: HTTP ${load}, share of raw`, measured: `${percent(floor)} (by CPU ${percent(floorByCpu)})`, goal: `>= ${percent(goals[load])}`, met: floor >= goals[load] });
      headline.push(`HTTP ${load} ${percent(floor)} of raw, by CPU ${percent(floorByCpu)} (formsink ${percent(formsink)}, by CPU ${percent(cpuShares.get(`formsink ${load}`)!)}; target ${percent(goals[load])})`);
    }
  } finally {
    for (const server of Object.values(servers)) await stopServerProcess(server.child);
  }
}

/** A way to load: SQL run on the fresh file before the load (`before`), SQL run after the rows within the clock (`after`), and whether the binding runs it too. */
interface LoadVariant {
  name: string;
  before: string;
  after?: string;
  /** Settings instead of SETTINGS. */
  settings?: string;
  binding: boolean;
}

const SUBMISSION_INDEXES = {
  submissions_by_tuple: "(account_id, popup_id, domain, device, status, created_at, id)",
  submissions_by_time: "(account_id, created_at, id)",
  submissions_by_popup: "(account_id, popup_id, created_at, id, status)",
} as const;
const INDEX_NAMES = Object.keys(SUBMISSION_INDEXES) as (keyof typeof SUBMISSION_INDEXES)[];
const DROP_INSERT_TRIGGERS = "DROP TRIGGER submissions_counted_on_insert; DROP TRIGGER submissions_identified_on_insert;";
const dropIndexes = (keep: readonly string[] = []) => INDEX_NAMES.filter((index) => !keep.includes(index)).map((index) => `DROP INDEX ${index};`).join(" ");
const CREATE_INDEXES = INDEX_NAMES.map((index) => `CREATE INDEX ${index} ON submissions ${SUBMISSION_INDEXES[index]};`).join("\n");
/** The count triggers' work for every row at once, grouped as formsink's import groups it (src/stores/sql/import.ts). */
const GROUPED_COUNTS = `BEGIN;
CREATE TEMP TABLE floor_days AS SELECT account_id, popup_id, domain, device, status, created_at / 86400000 AS day, COUNT(*) AS n FROM submissions GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO submission_counts (account_id, popup_id, domain, device, status, n) SELECT account_id, popup_id, domain, device, status, SUM(n) FROM floor_days GROUP BY 1, 2, 3, 4, 5;
INSERT INTO submission_day_counts (account_id, day, popup_id, domain, device, status, n) SELECT account_id, day, popup_id, domain, device, status, n FROM floor_days;
INSERT INTO submission_day_counts_all_popups (account_id, domain, device, status, day, n) SELECT account_id, domain, device, status, day, SUM(n) FROM floor_days GROUP BY 1, 2, 3, 4, 5;
${["popup_id", "domain", "device", "status"].map((column) => `INSERT INTO submission_value_days (account_id, field, day, value, n) SELECT account_id, '${column}', day, ${column}, SUM(n) FROM floor_days GROUP BY account_id, day, ${column};`).join("\n")}
DROP TABLE floor_days;
COMMIT;`;
/** The change log's row per created submission, in one statement after the rows. */
const GROUPED_EVENTS = `INSERT INTO events (account_id, type, at, popup_id, submission_id, created_status, event, submission_rowid, account_position)
  SELECT account_id, 'submission.created', created_at, popup_id, id, status,
    '{"type":"submission.created","submissionId":"' || id || '","popupId":"' || popup_id || '"}', rowid, rowid FROM submissions ORDER BY rowid;`;

/**
 * A rollback journal instead of the WAL, still synced: rows written to new pages need no copy of
 * their old content, so the rows are written once, not to the WAL and then again by checkpoints.
 * Only for a file no other connection has open (leaving WAL mode needs that).
 */
const ROLLBACK_SETTINGS = "PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL; PRAGMA cache_size = -262144;";
const FORMSINK_SCHEMA = "formsink's schema, counts by trigger";
const BUILT_AFTER = "primary table, then the 3 indexes built and the counts grouped";
const PRIMARY_ONLY = "primary table only";
const BARE = `${DROP_INSERT_TRIGGERS} ${dropIndexes()}`;
const LOAD_VARIANTS: LoadVariant[] = [
  { name: FORMSINK_SCHEMA, before: "", binding: false },
  { name: BUILT_AFTER, before: BARE, after: `${CREATE_INDEXES}\n${GROUPED_COUNTS}`, binding: true },
  { name: `${BUILT_AFTER}, + a change-log row each`, before: BARE, after: `${CREATE_INDEXES}\n${GROUPED_COUNTS}\n${GROUPED_EVENTS}`, binding: false },
  { name: `${BUILT_AFTER}, rollback journal`, before: BARE, after: `${CREATE_INDEXES}\n${GROUPED_COUNTS}`, settings: ROLLBACK_SETTINGS, binding: false },
  { name: "3 secondary indexes, no counts", before: DROP_INSERT_TRIGGERS, binding: false },
  { name: PRIMARY_ONLY, before: BARE, binding: true },
  { name: `${PRIMARY_ONLY}, rollback journal`, before: BARE, settings: ROLLBACK_SETTINGS, binding: false },
  { name: `${PRIMARY_ONLY}, no journal, no sync`, before: BARE, settings: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;", binding: false },
  ...INDEX_NAMES.map((index) => ({ name: `primary table + ${index}`, before: `${DROP_INSERT_TRIGGERS} ${dropIndexes([index])}`, binding: false })),
];

const COLUMNS = "account_id, id, popup_id, domain, device, user_agent, status, created_at, data, plain_text";
const ACCOUNT = "floor-account";
const TRANSACTION_ROWS = 100_000;
const STATEMENT_ROWS = 100;
const SETTINGS = "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -262144;";

/** Calls `take` with each of the NDJSON file's first `limit` submissions, read in chunks cut at each newline (as store.ts reads it). */
async function eachSubmission(limit: number, take: (submission: Submission) => void): Promise<void> {
  let rest = "";
  let count = 0;
  for await (const chunk of createReadStream(NDJSON, { encoding: "utf8" }) as AsyncIterable<string>) {
    let start = 0;
    let end = chunk.indexOf("\n");
    if (end >= 0 && rest !== "") {
      take(JSON.parse(rest + chunk.slice(0, end)) as Submission);
      if (++count === limit) return;
      start = end + 1;
      rest = "";
    }
    for (end = chunk.indexOf("\n", start); end >= 0; end = chunk.indexOf("\n", start)) {
      take(JSON.parse(chunk.slice(start, end)) as Submission);
      if (++count === limit) return;
      start = end + 1;
    }
    rest += chunk.slice(start);
  }
}

const rowOf = (s: Submission) => [ACCOUNT, s.submissionId, s.popupId, s.domain, s.device, s.userAgent, s.status, Date.parse(s.createdAt), JSON.stringify(s.data), 1];
const sqlText = (value: string | number) => (typeof value === "number" ? String(value) : `'${value.replaceAll("'", "''")}'`);

/** The SQL file the shell reads: the rows as multi-row INSERTs, in transactions of TRANSACTION_ROWS. */
async function writeSqlFile(path: string): Promise<void> {
  const out = openSync(path, "w");
  try {
    let rows = 0;
    let statement: string[] = [];
    await eachSubmission(LOAD_ROWS, (submission) => {
      statement.push(`(${rowOf(submission).map(sqlText).join(",")})`);
      rows++;
      if (statement.length === STATEMENT_ROWS || rows === LOAD_ROWS) {
        const begin = (rows - statement.length) % TRANSACTION_ROWS === 0 ? "BEGIN;\n" : "";
        const commit = rows % TRANSACTION_ROWS === 0 || rows === LOAD_ROWS ? "\nCOMMIT;" : "";
        writeSync(out, `${begin}INSERT INTO submissions (${COLUMNS}) VALUES ${statement.join(",")};${commit}\n`);
        statement = [];
      }
    });
  } finally {
    closeSync(out);
  }
}

/** A fresh file with formsink's schema as its migrations make it, changed by `sql`. */
function variantFile(schema: string, sql: string): string {
  const path = join(workDir, "load.db");
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  copyFileSync(schema, path);
  if (sql !== "") {
    const db = new Database(path);
    db.exec(sql);
    db.close();
  }
  return path;
}

interface LoadFigure {
  seconds: number;
  cpuMicrosPerRow: number;
}

/** The shell's load of the SQL file, then `after`: wall time, and the shell's CPU time (its parent's children's times, from /proc). */
function shellLoad(path: string, sqlFile: string, settings: string, after = ""): LoadFigure {
  const script = `${canPin() ? "taskset -c 0 " : ""}sqlite3 -bail "$1" "$2" ".read '$3'" "$4" > /dev/null && cat /proc/$$/stat`;
  const started = performance.now();
  const stat = execFileSync("sh", ["-c", script, "sh", path, settings, sqlFile, after === "" ? "SELECT 1;" : after], { encoding: "utf8" });
  const seconds = (performance.now() - started) / 1000;
  const fields = stat.split(") ")[1]!.split(" ");
  const childCpu = (Number(fields[13]) + Number(fields[14])) / 100; // cutime, cstime: the waited-for children's
  return { seconds, cpuMicrosPerRow: (childCpu * 1e6) / LOAD_ROWS };
}

const insertSql = (rows: number) => `INSERT INTO submissions (${COLUMNS}) VALUES ${Array(rows).fill(`(${COLUMNS.split(",").map(() => "?").join(",")})`).join(",")}`;

/** This process's load through the binding: the NDJSON parsed and bound to one prepared multi-row INSERT, then `after`; `parseOnly`: no SQLite. */
async function bindingLoad(path: string, after = "", parseOnly = false): Promise<LoadFigure> {
  const db = new Database(path);
  db.exec(SETTINGS);
  const insert = db.prepare(insertSql(STATEMENT_ROWS));
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let args: unknown[] = [];
  let rows = 0;
  if (!parseOnly) db.exec("BEGIN");
  await eachSubmission(LOAD_ROWS, (submission) => {
    args.push(...rowOf(submission));
    rows++;
    if (rows % STATEMENT_ROWS === 0) {
      if (!parseOnly) insert.run(args);
      args = [];
    }
    if (!parseOnly && rows % TRANSACTION_ROWS === 0) db.exec("COMMIT; BEGIN");
  });
  if (!parseOnly) {
    if (args.length > 0) db.prepare(insertSql(rows % STATEMENT_ROWS)).run(args);
    db.exec("COMMIT");
    if (after !== "") db.exec(after);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  db.close();
  return { seconds, cpuMicrosPerRow: (cpu.user + cpu.system) / LOAD_ROWS };
}

async function loadFloors(): Promise<void> {
  pinSelf(0);
  const shell = (() => {
    try {
      return execFileSync("sqlite3", ["--version"], { encoding: "utf8" }).split(" ")[0];
    } catch {
      return undefined;
    }
  })();
  console.log(
    `\nBulk load: ${LOAD_ROWS.toLocaleString("en-US")} rows from ${NDJSON}; ${canPin() ? "pinned to core 0" : "not pinned"}; ` +
      `transactions of ${TRANSACTION_ROWS.toLocaleString("en-US")} rows, INSERTs of ${STATEMENT_ROWS} rows; ` +
      `sqlite3 shell ${shell ?? "not installed (apt-get install sqlite3): its column is left empty"}\n`,
  );
  if (!existsSync(NDJSON)) throw new Error(`${NDJSON} is missing: bench/store.ts writes it`);
  const schema = join(workDir, "schema.db");
  await (await createLibsqlStore({ url: `file:${schema}` })).close();
  const sqlFile = join(workDir, "rows.sql");
  if (shell) await writeSqlFile(sqlFile);
  const rate = (figure: LoadFigure) => LOAD_ROWS / figure.seconds;
  const cells = (figure: LoadFigure | undefined) => (figure ? [Math.round(rate(figure)).toLocaleString("en-US"), figure.cpuMicrosPerRow.toFixed(1)] : ["-", "-"]);
  const parse = await bindingLoad(variantFile(schema, ""), "", true);
  const rows: string[][] = [["read and parse the NDJSON only (no SQLite)", "-", "-", ...cells(parse)]];
  const results = new Map<string, LoadFigure[]>();
  for (const variant of LOAD_VARIANTS) {
    const shellFigure = shell ? shellLoad(variantFile(schema, variant.before), sqlFile, variant.settings ?? SETTINGS, variant.after) : undefined;
    const binding = variant.binding ? await bindingLoad(variantFile(schema, variant.before), variant.after) : undefined;
    results.set(variant.name, [shellFigure, binding].filter((figure) => figure !== undefined));
    rows.push([variant.name, ...cells(shellFigure), ...cells(binding)]);
  }
  console.log(`${formatTable(["schema", "shell rows/s", "shell CPU us/row", "binding rows/s", "binding CPU us/row"], rows)}\n`);
  /** The faster of a variant's loads, in rows/s, and the lesser CPU per row. */
  const best = (name: string) => Math.max(...results.get(name)!.map(rate));
  const leastCpu = (name: string) => Math.min(...results.get(name)!.map((figure) => figure.cpuMicrosPerRow));
  // A core of its own would load at most 1 / (CPU a row): on a shared machine the wall-clock rate falls with others' load, that bound does not.
  const byCpu = (name: string) => Math.round(1e6 / leastCpu(name)).toLocaleString("en-US");
  for (const name of [FORMSINK_SCHEMA, BUILT_AFTER, PRIMARY_ONLY]) {
    const met = best(name) >= 100_000;
    figures.push({ target: 8, what: `floor: bulk load, ${name}`, measured: `${Math.round(best(name)).toLocaleString("en-US")} rows/s (by CPU ${byCpu(name)})`, goal: ">= 100,000 rows/s", met });
  }
  headline.push(
    `bulk load ${Math.round(best(BUILT_AFTER)).toLocaleString("en-US")} rows/s (${leastCpu(BUILT_AFTER).toFixed(1)} us CPU a row: ${byCpu(BUILT_AFTER)} on a core of its own) into formsink's schema built after the rows, ` +
      `${Math.round(best(PRIMARY_ONLY)).toLocaleString("en-US")} (${leastCpu(PRIMARY_ONLY).toFixed(1)} us: ${byCpu(PRIMARY_ONLY)}) into the primary table alone (target 100,000 rows/s)`,
  );
}

// Last, so that every constant above is set before the parts run.
try {
  if (part === undefined || part === "http") await httpFloors();
  if (part === undefined || part === "load") await loadFloors();
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
reportTargets(figures);
console.log(`\nheadline: floors on this machine - ${headline.join("; ")}`);
