/**
 * HTTP through the Node adapter (issue 6, targets 1-3): list, get by id and create through
 * `formsink/node` on a libSQL file of 100,000 submissions, each as a share of a raw node:http
 * server measured in the same run, before formsink's workloads and after them, each share of the
 * faster of the two windows (a fixed 2 KB JSON for the reads; reading and parsing a JSON body,
 * answering 201, for the create). Each server runs alone in its own process on core 0;
 * autocannon runs here on core 1, 10 keep-alive connections, a 5 s warm-up before each run.
 *
 *   node --import tsx bench/http.ts [--quick] [--only=list|get|create] [--metrics] [--profile=<dir>] [--threads]
 *
 * `--quick`: 3 s runs on 20,000 submissions. `--only=<text>`: the raw servers and the formsink
 * workloads whose name contains <text>. `--metrics`: the formsink server counts what
 * `formsink serve --metrics` counts (run with and without it to see what metrics cost). `--profile=<dir>`: the formsink server writes a V8 CPU
 * profile (`--cpu-prof`) there when it stops (read it with bench/support/profile-top.ts). `--threads`: each
 * workload's server CPU per request split by thread (the event loop, libSQL's threads where commits
 * and their fsyncs run, V8's and Node's helpers: compilation and GC). The database is made once through
 * `importSubmissions` and kept in bench/.data/; each run works on a copy in a temporary directory
 * of its own (removed at the end, also when the run fails), so the creates of one run do not
 * change the next one's data, and two runs at once do not write to the same copy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canPin, formatTable, type LoadOptions, pinSelf, startServerProcess, stopServerProcess } from "./support/load.ts";
import { createRequest, httpDatabase, listRequests, type Measured, measure, workingCopy } from "./support/http-setup.ts";
import { reportTargets, type TargetFigure } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length);
const withMetrics = process.argv.includes("--metrics");
const byThread = process.argv.includes("--threads");
const profileDir = process.argv.find((arg) => arg.startsWith("--profile="))?.slice("--profile=".length);
const ROWS = quick ? 20_000 : 100_000;
const SECONDS = quick ? 3 : 10;
const RAW_SERVER = new URL("./support/bridge-server.ts", import.meta.url);
const FORMSINK_SERVER = new URL("./support/export-server.ts", import.meta.url);

pinSelf(1);
console.log(
  `Node ${process.version}; ${canPin() ? "server on core 0, load on core 1" : "taskset unavailable: not pinned"}; ` +
    `${SECONDS} s per run, 10 connections; libSQL file with ${ROWS.toLocaleString("en-US")} submissions\n`,
);

const { path: database, key, ids } = await httpDatabase(ROWS);
const keyed = { "x-api-key": key };
const listLoad = listRequests(key);

/** `GET /api/submission/:id`, a different existing id each time (a seeded walk over all of them). */
let nextId = 0;
const getRequests = [{
  method: "GET" as const,
  headers: keyed,
  setupRequest: (request: object) => {
    nextId = (nextId + 7919) % ids.length; // a prime stride: every id, in no index order
    return { ...request, path: `/api/submission/${ids[nextId]}` };
  },
}];

const createLoad = createRequest(key);

interface Workload {
  name: string;
  server: "raw GET" | "raw POST" | "formsink";
  /** The raw server's workload it is compared with. */
  baseline: string;
  load: Omit<LoadOptions, "url" | "durationSeconds">;
}

const RAW_GET = "raw node:http, fixed 2 KB JSON";
const RAW_POST = "raw node:http, parse JSON body, 201";
const LIST = "list page 1 + total (popupId, status)";
const GET = "get by id";
const CREATE = "create (JSON, secret key)";

const WORKLOADS = ([
  { name: RAW_GET, server: "raw GET", baseline: RAW_GET, load: {} },
  { name: RAW_POST, server: "raw POST", baseline: RAW_POST, load: { method: "POST", headers: createLoad.headers, body: createLoad.body } },
  { name: LIST, server: "formsink", baseline: RAW_GET, load: { requests: listLoad } },
  { name: GET, server: "formsink", baseline: RAW_GET, load: { requests: getRequests } },
  { name: CREATE, server: "formsink", baseline: RAW_POST, load: { requests: [createLoad] } },
] satisfies Workload[]).filter((w: Workload) => w.server !== "formsink" || only === undefined || w.name.includes(only));

const results = new Map<string, Measured>();
const RAW_WINDOWS = ["before", "after"] as const;
/** Each raw workload's windows, measured before formsink's and after them (RAW_WINDOWS' order). */
const rawWindows = new Map<string, Measured[]>();
async function measureRaw(): Promise<void> {
  const { url, child } = await startServerProcess(RAW_SERVER, ["raw node:http"], 0);
  try {
    for (const workload of WORKLOADS.filter((w) => w.server !== "formsink")) {
      const windows = rawWindows.get(workload.name) ?? [];
      windows.push(await measure(workload.name, workload.load, url, child.pid!, SECONDS));
      rawWindows.set(workload.name, windows);
    }
  } finally {
    await stopServerProcess(child);
  }
}
await measureRaw();
{
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const workDir = mkdtempSync(join(tmpdir(), "formsink-bench-http-"));
  try {
    const copy = workingCopy(database, join(workDir, `http-${ROWS}-run.db`));
    const { url, child } = await startServerProcess(FORMSINK_SERVER, [copy, ...(withMetrics ? ["--metrics"] : [])], 0, profile);
    try {
      for (const workload of WORKLOADS.filter((w) => w.server === "formsink")) results.set(workload.name, await measure(workload.name, workload.load, url, child.pid!, SECONDS));
    } finally {
      await stopServerProcess(child);
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

await measureRaw();
// Other work on the machine only slows a window down, so the faster of a raw workload's two
// windows is the nearer to the raw server's own speed; judging by it, a disturbed raw window
// cannot make a share look met.
for (const [name, windows] of rawWindows) results.set(name, windows.reduce((faster, window) => (window.requestsPerSecond > faster.requestsPerSecond ? window : faster)));

/** `measured`'s (by default the workload's own result's) rate as a share of its raw workload's faster window. */
const shareOfRaw = (workload: Workload, measured = results.get(workload.name)!) => measured.requestsPerSecond / results.get(workload.baseline)!.requestsPerSecond;
const percent = (fraction: number) => `${(100 * fraction).toFixed(0)}%`;

console.log(
  `\n${formatTable(
    ["workload", "req/s", "vs raw", "p50 ms", "p99 ms", "server CPU us/req"],
    WORKLOADS.flatMap((workload) => {
      const row = (name: string, r: Measured) =>
        [name, r.requestsPerSecond.toFixed(0), percent(shareOfRaw(workload, r)), r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), r.serverMicros.toFixed(1)];
      const windows = rawWindows.get(workload.name);
      return windows ? windows.map((window, i) => row(`${workload.name}, ${RAW_WINDOWS[i]}`, window)) : [row(workload.name, results.get(workload.name)!)];
    }),
  )}\n\nEach share is of the faster of its raw workload's two windows (before and after formsink's).`,
);

if (byThread) {
  const kinds = ["event loop", "libSQL", "V8 and Node", "exited"];
  console.log(
    `\nserver CPU us/req by thread\n${formatTable(
      ["workload", ...kinds],
      WORKLOADS.map((workload) => [workload.name, ...kinds.map((kind) => (results.get(workload.name)!.threadMicros[kind] ?? 0).toFixed(1))]),
    )}`,
  );
}

const measured = (name: string) => WORKLOADS.find((w) => w.name === name);
const figures: TargetFigure[] = [];
const shareFigure = (target: number, what: string, name: string, goal: number) => {
  const workload = measured(name);
  if (!workload) return;
  const share = shareOfRaw(workload);
  const rps = Math.round(results.get(name)!.requestsPerSecond).toLocaleString("en-US");
  figures.push({ target, what: `${what}, share of raw`, measured: `${percent(share)} (${rps} req/s)`, goal: `>= ${percent(goal)}`, met: share >= goal });
};
shareFigure(1, "HTTP list page 1 + total", LIST, 0.5);
if (measured(LIST)) {
  const p99 = results.get(LIST)!.p99Ms;
  figures.push({ target: 1, what: "HTTP list page 1 + total, p99", measured: `${p99.toFixed(1)} ms`, goal: "<= 10 ms", met: p99 <= 10 });
}
shareFigure(2, "HTTP get by id", GET, 0.6);
shareFigure(3, "HTTP create (durable)", CREATE, 0.35);
reportTargets(figures);

console.log(
  `\nheadline: HTTP through formsink/node on ${ROWS.toLocaleString("en-US")} submissions, share of raw node:http - ` +
    WORKLOADS.filter((w) => w.server === "formsink").map((w) => `${w.name} ${percent(shareOfRaw(w))}`).join(", ") +
    (measured(LIST) ? ` (list p99 ${results.get(LIST)!.p99Ms.toFixed(1)} ms)` : "") +
    "; targets: list >= 50% with p99 <= 10 ms, get >= 60%, create >= 35%",
);
