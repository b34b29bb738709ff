/**
 * formsink against what a user could write themselves (issue 18): a plain server
 * (support/baseline-server.ts: node:http, the same `libsql` binding, `COUNT(*)` for the total,
 * a durable insert per create) on the same submissions, formsink through `formsink/node`, and a
 * raw node:http server (a fixed 2 KB JSON; reading, parsing and answering 201 to a JSON body),
 * all measured in one run. Each server runs alone in its own process on core 0; autocannon
 * runs here on core 1, 10 keep-alive connections, a 5 s warm-up before each run.
 *
 *   node --import tsx bench/baseline.ts [--quick]
 *
 * `--quick`: 3 s runs on 20,000 submissions.
 */
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { generateSubmissions } from "./support/dataset.ts";
import { createRequest, DATA_DIR, httpDatabase, listRequests, type Measured, measure, removeDatabase, workingCopy } from "./support/http-setup.ts";
import { canPin, formatTable, type LoadOptions, pinSelf, startServerProcess, stopServerProcess } from "./support/load.ts";
import { reportTargets, type TargetFigure } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const ROWS = quick ? 20_000 : 100_000;
const SECONDS = quick ? 3 : 10;
const RAW_SERVER = new URL("./support/bridge-server.ts", import.meta.url);
const FORMSINK_SERVER = new URL("./support/export-server.ts", import.meta.url);
const BASELINE_SERVER = new URL("./support/baseline-server.ts", import.meta.url);

pinSelf(1);
console.log(
  `Node ${process.version}; ${canPin() ? "servers on core 0, load on core 1" : "taskset unavailable: not pinned"}; ` +
    `${SECONDS} s per run, 10 connections; libSQL files with ${ROWS.toLocaleString("en-US")} submissions\n`,
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

/** Runs each workload against a server started for them, stopping it after. */
async function against(script: URL, args: string[], workloads: [string, Load][]): Promise<Map<string, Measured>> {
  const results = new Map<string, Measured>();
  const { url, child } = await startServerProcess(script, args, 0);
  try {
    for (const [name, load] of workloads) results.set(name, await measure(name, load, url, child.pid!, SECONDS));
  } finally {
    await stopServerProcess(child);
  }
  return results;
}

// The runs' creates write to copies in a directory of their own, removed whatever happens.
const workDir = mkdtempSync(join(tmpdir(), "formsink-bench-baseline-"));
let raw: Map<string, Measured>, formsink: Map<string, Measured>, plain: Map<string, Measured>;
try {
  const formsinkCopy = workingCopy(formsinkDatabase.path, join(workDir, "formsink-run.db"));
  const plainCopy = workingCopy(plainDatabase, join(workDir, "plain-run.db"));
  raw = await against(RAW_SERVER, ["raw node:http"], [[RAW_GET, {}], [RAW_POST, { method: "POST", headers: create.headers, body: create.body }]]);
  formsink = await against(FORMSINK_SERVER, [formsinkCopy], [[LIST, list], [CREATE, { requests: [create] }]]);
  plain = await against(BASELINE_SERVER, [plainCopy, formsinkDatabase.key], [[LIST, list], [CREATE, { requests: [create] }]]);
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

const rps = (results: Map<string, Measured>, name: string) => results.get(name)!.requestsPerSecond;
const row = (server: string, results: Map<string, Measured>, name: string, rawName: string) => {
  const r = results.get(name)!;
  return [`${server}: ${name}`, r.requestsPerSecond.toFixed(0), `${((100 * r.requestsPerSecond) / rps(raw, rawName)).toFixed(0)}%`, r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), r.serverMicros.toFixed(1)];
};
console.log(
  `\n${formatTable(["workload", "req/s", "vs raw", "p50 ms", "p99 ms", "server CPU us/req"], [
    row("raw", raw, RAW_GET, RAW_GET),
    row("raw", raw, RAW_POST, RAW_POST),
    row("formsink", formsink, LIST, RAW_GET),
    row("formsink", formsink, CREATE, RAW_POST),
    row("baseline", plain, LIST, RAW_GET),
    row("baseline", plain, CREATE, RAW_POST),
  ])}`,
);

const listShare = rps(formsink, LIST) / rps(raw, RAW_GET);
const createShare = rps(formsink, CREATE) / rps(raw, RAW_POST);
const listLead = rps(formsink, LIST) / rps(plain, LIST);
const createLead = rps(formsink, CREATE) / rps(plain, CREATE);
const percent = (fraction: number) => `${(100 * fraction).toFixed(0)}%`;
const times = (ratio: number) => `${ratio.toFixed(2)}x`;
const figures: TargetFigure[] = [
  { target: "18", what: "HTTP list page 1 + total, share of raw", measured: percent(listShare), goal: ">= 25%", met: listShare >= 0.25 },
  { target: "18", what: "HTTP durable create, share of raw", measured: percent(createShare), goal: ">= 35%", met: createShare >= 0.35 },
  { target: "18", what: "HTTP list, formsink vs the plain baseline", measured: times(listLead), goal: ">= 3x", met: listLead >= 3 },
  { target: "18", what: "HTTP create, formsink vs the plain baseline", measured: times(createLead), goal: ">= 2x", met: createLead >= 2 },
];
reportTargets(figures);
console.log(
  `\nheadline: formsink on ${ROWS.toLocaleString("en-US")} submissions - list ${percent(listShare)} of raw node:http and ${times(listLead)} the plain baseline, ` +
    `create ${percent(createShare)} of raw and ${times(createLead)} the plain baseline; targets: list >= 25% and >= 3x, create >= 35% and >= 2x`,
);
