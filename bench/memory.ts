/**
 * Memory (target 9): (a) the RSS of an idle `formsink serve` (the built CLI, a libSQL file)
 * after it answered one create and one list, and (b) what a memory store holding 1,000,000
 * submissions costs per submission beyond the submission's own JSON size. Each is measured in
 * a process of its own, RSS read from /proc/<pid>/status. `--quick`: 200,000 submissions for (b).
 *
 *   node --import tsx bench/memory.ts [--quick]
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertBuilt, formatTable } from "./support/load.ts";
import { reportTargets } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const STORE_ROWS = quick ? 200_000 : 1_000_000;
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(ROOT, "dist/cli/bin.js");
assertBuilt();
/** How long the idle server is watched after its request: V8 shrinks an idle heap after ~10 s. */
const SETTLE_SECONDS = 20;
const IDLE_TARGET_MB = 60;
const PER_ROW_TARGET = 300;
const MB = 1024 * 1024;

interface ProcessMemory {
  rss: number;
  anon: number;
  file: number;
}

function memoryOf(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kB("VmRSS"), anon: kB("RssAnon"), file: kB("RssFile") };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `node -e` that only waits: the floor any Node server starts from. */
async function bareNode(): Promise<ProcessMemory> {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" });
  try {
    await sleep(1000);
    return memoryOf(child.pid!);
  } finally {
    child.kill("SIGTERM");
  }
}

async function idleServer(): Promise<{ afterRequest: ProcessMemory; settled: ProcessMemory }> {
  const dir = mkdtempSync(join(tmpdir(), "formsink-bench-memory-"));
  const db = `file:${join(dir, "idle.db")}`;
  const key = execFileSync(process.execPath, [CLI, "keys", "create", "--account", "bench", "--db", db], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).split("\n")[0]!.trim();
  const server = spawn(process.execPath, [CLI, "serve", "--db", db, "--port", "0"], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let seen = "";
      server.stdout!.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /formsink \S+ serving (\S+)/.exec(seen);
        if (match) resolve(match[1]!);
      });
      server.once("exit", (code) => reject(new Error(`formsink serve exited with ${code}`)));
    });
    // A create first: what a server that collects leads has done. A valid create and a list
    // read their input without arktype (src/routes/create/fields.ts, src/routes/list-parameters.ts),
    // which loads with the first 400 or the first admin route that validates with it.
    const created = await fetch(`${url}/api/submission`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ popupId: "newsletter", data: { email: "jane@example.com" } }),
    });
    if (created.status !== 201) throw new Error(`POST /api/submission answered ${created.status}: ${await created.text()}`);
    const response = await fetch(`${url}/api/submission`, { headers: { "x-api-key": key } });
    if (response.status !== 200) throw new Error(`GET /api/submission answered ${response.status}`);
    await response.arrayBuffer();
    await sleep(1000);
    const afterRequest = memoryOf(server.pid!);
    await sleep((SETTLE_SECONDS - 1) * 1000);
    return { afterRequest, settled: memoryOf(server.pid!) };
  } finally {
    server.kill("SIGTERM");
    await new Promise((resolve) => (server.exitCode === null ? server.once("exit", resolve) : resolve(null)));
    rmSync(dir, { recursive: true, force: true });
  }
}

interface StoreLoad {
  rows: number;
  jsonBytes: number;
  importMs: number;
  before: { rss: number; heapUsed: number; heapTotal: number; external: number };
  after: { rss: number; heapUsed: number; heapTotal: number; external: number };
}

interface ImportStep {
  name: string;
  rss: number;
  heapUsed: number;
  heapTotal: number;
}

/** What each module the server loads adds (the profile of the idle figure). */
function startupImports(): ImportStep[] {
  const script = fileURLToPath(new URL("./support/startup-imports.mjs", import.meta.url));
  return JSON.parse(execFileSync(process.execPath, ["--expose-gc", script], { encoding: "utf8", cwd: ROOT }).trim()) as ImportStep[];
}

function loadMemoryStore(rows: number): StoreLoad {
  const script = fileURLToPath(new URL("./support/memory-store-load.ts", import.meta.url));
  const output = execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", script, String(rows)], { encoding: "utf8", cwd: ROOT });
  return JSON.parse(output.trim().split("\n").at(-1)!) as StoreLoad;
}

console.log(`Node ${process.version}; building dist/ (npm run build) for the idle server`);
execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: "ignore" });

const bare = await bareNode();
const idle = await idleServer();
const imports = startupImports();
const load = loadMemoryStore(STORE_ROWS);
const perRow = (before: number, after: number) => (after - before) / load.rows;
const beyondJson = (load.after.rss - load.before.rss - load.jsonBytes) / load.rows;

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const bytes = (value: number) => `${value.toFixed(0)} B`;
const split = (m: ProcessMemory) => `${mb(m.rss)} (anon ${mb(m.anon)}, file ${mb(m.file)})`;
console.log("");
console.log(
  formatTable(
    ["figure", "value"],
    [
      ["bare `node -e` waiting (the floor)", split(bare)],
      ["idle formsink serve, 1 s after a create and a list", split(idle.afterRequest)],
      [`idle formsink serve, ${SETTLE_SECONDS} s after it (settled)`, split(idle.settled)],
      ["memory store: submissions in one account", load.rows.toLocaleString("en-US")],
      ["  mean JSON size", bytes(load.jsonBytes / load.rows)],
      ["  RSS growth", mb(load.after.rss - load.before.rss)],
      ["  per submission beyond its JSON: RSS", bytes(beyondJson)],
      ["    V8 heap in use, beyond the JSON", bytes(perRow(load.before.heapUsed, load.after.heapUsed) - load.jsonBytes / load.rows)],
      ["    V8 heap reserved but free", bytes(perRow(load.before.heapTotal - load.before.heapUsed, load.after.heapTotal - load.after.heapUsed))],
      ["    off-heap (typed arrays)", bytes(perRow(load.before.external, load.after.external))],
      ["  import rate (store time only)", `${Math.round(load.rows / (load.importMs / 1000)).toLocaleString("en-US")} rows/s`],
    ],
  ),
);

console.log("\nWhat the server's modules add at load (each after full garbage collections):\n");
console.log(
  formatTable(
    ["step", "RSS", "V8 heap used", "V8 heap reserved"],
    imports.map((step, i) => {
      const before = imports[i - 1];
      const delta = (value: number, previous: number | undefined) => (previous === undefined ? mb(value) : `+${mb(value - previous)}`);
      return [step.name, delta(step.rss, before?.rss), delta(step.heapUsed, before?.heapUsed), delta(step.heapTotal, before?.heapTotal)];
    }),
  ),
);

const idleMb = idle.settled.rss / MB;
reportTargets([
  { target: 9, what: "idle server RSS (settled)", measured: `${idleMb.toFixed(1)} MB`, goal: `<= ${IDLE_TARGET_MB} MB`, met: idleMb <= IDLE_TARGET_MB },
  {
    target: 9,
    what: `memory store RSS per submission beyond its JSON (${load.rows.toLocaleString("en-US")} rows)`,
    measured: `${beyondJson.toFixed(0)} B`,
    goal: `<= ${PER_ROW_TARGET} B`,
    met: beyondJson <= PER_ROW_TARGET,
  },
]);
console.log(
  `\nheadline: idle server RSS ${idleMb.toFixed(1)} MB settled (${(idle.afterRequest.rss / MB).toFixed(1)} MB right after its request; target <= ${IDLE_TARGET_MB} MB); memory store ${beyondJson.toFixed(0)} B per submission beyond its JSON at ${load.rows.toLocaleString("en-US")} rows (target <= ${PER_ROW_TARGET} B)`,
);
