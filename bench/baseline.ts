/**
 * formsink against what a user could write themselves (issue 18): a plain server
 * (support/baseline-server.ts: node:http, the same `libsql` binding, `COUNT(*)` for the total,
 * a durable insert per create) on the same submissions, formsink through `formsink/node`, and a
 * raw node:http server (a fixed 2 KB JSON; reading, parsing and answering 201 to a JSON body),
 * all measured in one run. The three servers run in their own processes on core 0; autocannon
 * runs here on core 1, 10 keep-alive connections, a 5 s warm-up before each run, one server
 * loaded at a time. The runs go in rounds (raw, formsink and the baseline on the list, then the
 * same on the create), so that each figure compares runs a few seconds apart; each figure is the
 * median of its rounds' (this machine's speed drifts between runs a minute apart by more than
 * some of the differences measured).
 *
 *   node --import tsx bench/baseline.ts [--quick] [--rounds=<n>]
 *
 * `--quick`: 3 s runs on 20,000 submissions, one round. `--rounds`: 3 unless quick.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { generateSubmissions } from "./support/dataset.ts";
import { createRequest, DATA_DIR, httpDatabase, listRequests, type Measured, measure, removeDatabase, workingCopy } from "./support/http-setup.ts";
import { canPin, formatTable, type LoadOptions, pinSelf, startServerProcess, stopServerProcess } from "./support/load.ts";
import { reportTargets, type TargetFigure } from "./support/targets.ts";
import { median } from "./support/timing.ts";

const quick = process.argv.includes("--quick");
const ROWS = quick ? 20_000 : 100_000;
const SECONDS = quick ? 3 : 10;
const ROUNDS = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice("--rounds=".length) ?? (quick ? 1 : 3));
const RAW_SERVER = new URL("./support/bridge-server.ts", import.meta.url);
const FORMSINK_SERVER = new URL("./support/export-server.ts", import.meta.url);
const BASELINE_SERVER = new URL("./support/baseline-server.ts", import.meta.url);

pinSelf(1);
console.log(
  `Node ${process.version}; ${canPin() ? "servers on core 0, load on core 1" : "taskset unavailable: not pinned"}; ` +
    `${SECONDS} s per run, ${ROUNDS} round${ROUNDS === 1 ? "" : "s"}, 10 connections; libSQL files with ${ROWS.toLocaleString("en-US")} submissions\n`,
);

/**
 * The baseline's database: the same submissions in the table a user would make (no account,
 * an index per filter ending in the list order), made once.
 */
function baselineDatabase(): string {
  const path = `${DATA_DIR}baseline-${ROWS}.db`;
  if (existsSync(path)) return path;
  const partial = `${path}.partial`;
  removeDatabase(partial);
  const db = new Database(partial);
  db.exec(`CREATE TABLE submissions (
    id TEXT PRIMARY KEY, popup_id TEXT NOT NULL, domain TEXT NOT NULL, device TEXT NOT NULL,
    user_agent TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL)`);
  for (const column of ["popup_id", "domain", "device", "status"]) db.exec(`CREATE INDEX by_${column} ON submissions (${column}, created_at)`);
  db.exec("CREATE INDEX by_time ON submissions (created_at)");
  const insert = db.prepare("INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  db.exec("BEGIN");
  for (const s of generateSubmissions(ROWS)) insert.run(s.submissionId, s.popupId, s.domain, s.device, s.userAgent, s.status, s.createdAt, JSON.stringify(s.data));
  db.exec("COMMIT");
  db.close();
  renameSync(partial, path);
  return path;
}

const formsinkDatabase = await httpDatabase(ROWS);
const plainDatabase = baselineDatabase();
const list = { requests: listRequests(formsinkDatabase.key) };
const create = createRequest(formsinkDatabase.key);

type Load = Omit<LoadOptions, "url" | "durationSeconds">;
const RAW_GET = "raw node:http, fixed 2 KB JSON";
const RAW_POST = "raw node:http, parse JSON body, 201";
const LIST = "list page 1 + total (popupId, status)";
const CREATE = "create (JSON, durable)";

type Round = { raw: Map<string, Measured>; formsink: Map<string, Measured>; plain: Map<string, Measured> };
const rounds: Round[] = [];

// The runs' creates write to copies in a directory of their own, removed whatever happens.
const workDir = mkdtempSync(join(tmpdir(), "formsink-bench-baseline-"));
const servers: ChildProcess[] = [];
try {
  const formsinkCopy = workingCopy(formsinkDatabase.path, join(workDir, "formsink-run.db"));
  const plainCopy = workingCopy(plainDatabase, join(workDir, "plain-run.db"));
  const start = async (script: URL, args: string[]) => {
    const { url, child } = await startServerProcess(script, args, 0);
    servers.push(child);
    return { url, pid: child.pid! };
  };
  const rawServer = await start(RAW_SERVER, ["raw node:http"]);
  const formsinkServer = await start(FORMSINK_SERVER, [formsinkCopy]);
  const plainServer = await start(BASELINE_SERVER, [plainCopy, formsinkDatabase.key]);
  const run = async (into: Map<string, Measured>, server: { url: string; pid: number }, name: string, load: Load) => {
    into.set(name, await measure(name, load, server.url, server.pid, SECONDS));
  };
  for (let i = 0; i < ROUNDS; i++) {
    const round: Round = { raw: new Map(), formsink: new Map(), plain: new Map() };
    await run(round.raw, rawServer, RAW_GET, {});
    await run(round.formsink, formsinkServer, LIST, list);
    await run(round.plain, plainServer, LIST, list);
    await run(round.raw, rawServer, RAW_POST, { method: "POST", headers: create.headers, body: create.body });
    await run(round.formsink, formsinkServer, CREATE, { requests: [create] });
    await run(round.plain, plainServer, CREATE, { requests: [create] });
    rounds.push(round);
  }
} finally {
  for (const child of servers) await stopServerProcess(child);
  rmSync(workDir, { recursive: true, force: true });
}

const rps = (results: Map<string, Measured>, name: string) => results.get(name)!.requestsPerSecond;
for (const [i, { raw, formsink, plain }] of rounds.entries()) {
  const row = (server: string, results: Map<string, Measured>, name: string, rawName: string) => {
    const r = results.get(name)!;
    return [`${server}: ${name}`, r.requestsPerSecond.toFixed(0), `${((100 * r.requestsPerSecond) / rps(raw, rawName)).toFixed(0)}%`, r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), r.serverMicros.toFixed(1)];
  };
  console.log(
    `\n${ROUNDS === 1 ? "" : `round ${i + 1}\n`}${formatTable(["workload", "req/s", "vs raw", "p50 ms", "p99 ms", "server CPU us/req"], [
      row("raw", raw, RAW_GET, RAW_GET),
      row("formsink", formsink, LIST, RAW_GET),
      row("baseline", plain, LIST, RAW_GET),
      row("raw", raw, RAW_POST, RAW_POST),
      row("formsink", formsink, CREATE, RAW_POST),
      row("baseline", plain, CREATE, RAW_POST),
    ])}`,
  );
}

/** A figure's value in each round, and their median. */
const perRound = (value: (round: Round) => number) => {
  const values = rounds.map(value);
  return { values, median: median(values) };
};
const listShare = perRound(({ raw, formsink }) => rps(formsink, LIST) / rps(raw, RAW_GET));
const createShare = perRound(({ raw, formsink }) => rps(formsink, CREATE) / rps(raw, RAW_POST));
const listLead = perRound(({ formsink, plain }) => rps(formsink, LIST) / rps(plain, LIST));
const createLead = perRound(({ formsink, plain }) => rps(formsink, CREATE) / rps(plain, CREATE));
const percent = (fraction: number) => `${(100 * fraction).toFixed(0)}%`;
const times = (ratio: number) => `${ratio.toFixed(2)}x`;
/** The median, and each round's value beside it when there are several. */
const shown = ({ values, median }: { values: number[]; median: number }, format: (value: number) => string) =>
  values.length === 1 ? format(median) : `${format(median)} (${values.map(format).join(", ")})`;
const figures: TargetFigure[] = [
  { target: "18", what: "HTTP list page 1 + total, share of raw", measured: shown(listShare, percent), goal: ">= 25%", met: listShare.median >= 0.25 },
  { target: "18", what: "HTTP durable create, share of raw", measured: shown(createShare, percent), goal: ">= 35%", met: createShare.median >= 0.35 },
  { target: "18", what: "HTTP list, formsink vs the plain baseline", measured: shown(listLead, times), goal: ">= 3x", met: listLead.median >= 3 },
  { target: "18", what: "HTTP create, formsink vs the plain baseline", measured: shown(createLead, times), goal: ">= 2x", met: createLead.median >= 2 },
];
reportTargets(figures);
console.log(
  `\nheadline: formsink on ${ROWS.toLocaleString("en-US")} submissions${ROUNDS === 1 ? "" : `, medians of ${ROUNDS} rounds`} - list ${percent(listShare.median)} of raw node:http and ${times(listLead.median)} the plain baseline, ` +
    `create ${percent(createShare.median)} of raw and ${times(createLead.median)} the plain baseline; targets: list >= 25% and >= 3x, create >= 35% and >= 2x`,
);
