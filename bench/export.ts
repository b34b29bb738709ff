/**
 * Export: how fast does GET /api/submission/export stream 1,000,000 submissions out of a libSQL
 * file, and how much does the server's memory grow while it does? The server runs alone in its
 * own process on core 0; this process reads the export on core 1, as fast as it comes, counting
 * rows, and samples the server's RSS (/proc/<pid>/status) every 20 ms. `--quick`: 100,000 rows.
 *
 *   node --import tsx bench/export.ts [--quick]
 *
 * The database is made once with the import path (`importSubmissions`, the bulk insert) and kept
 * in bench/.data/ for later runs; the time that took is printed too.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createApiKey } from "../src/auth/keys.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import type { Submission } from "../src/submission.ts";
import { canPin, cpuTimes, formatTable, pinSelf, startServerProcess, stopServerProcess } from "./support/load.ts";
import { reportTargets } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const ROWS = quick ? 100_000 : 1_000_000;
const DATA_DIR = fileURLToPath(new URL("./.data/", import.meta.url));
const DATABASE = `${DATA_DIR}export-${ROWS}.db`;
const SERVER = new URL("./support/export-server.ts", import.meta.url);
const IMPORT_BATCH = 5000;
const T0 = Date.UTC(2025, 0, 1);

pinSelf(1);
console.log(`Node ${process.version}; ${canPin() ? "server on core 0, reader on core 1" : "taskset unavailable: not pinned"}; ${ROWS.toLocaleString("en-US")} submissions\n`);

/** Submission `i`: a realistic lead, a few hundred bytes, spread over a year. */
function submission(i: number): Submission {
  return {
    submissionId: crypto.randomUUID(),
    popupId: `popup_${i % 5}`,
    data: {
      email: `visitor${i}@example.com`,
      name: `Visitor ${i}`,
      message: "I would like to hear more about the spring offer, please call me back.",
      consent: i % 3 !== 0,
      ...(i % 4 === 0 ? { phone: "+1 555 0100" } : {}),
    },
    domain: ["example.com", "shop.example.com", "blog.example.com"][i % 3]!,
    userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
    device: (["desktop", "mobile", "tablet"] as const)[i % 3]!,
    status: i % 7 === 0 ? "completed" : "pending",
    createdAt: new Date(T0 + i * 31_536).toISOString(), // a year's milliseconds / 1M
  };
}

/** The database with ROWS submissions and a key for them: reused when it is already there. */
async function database(): Promise<string> {
  const keyFile = `${DATABASE}.key`;
  if (existsSync(DATABASE) && existsSync(keyFile)) {
    console.log(`database: reusing ${DATABASE}`);
    // Opened once here, so that a schema migration runs in this process, not in the server's.
    await (await createLibsqlStore({ url: `file:${DATABASE}` })).close();
    return readFileSync(keyFile, "utf8");
  }
  mkdirSync(DATA_DIR, { recursive: true });
  for (const suffix of ["", "-wal", "-shm", ".key"]) rmSync(`${DATABASE}${suffix}`, { force: true });
  const store = await createLibsqlStore({ url: `file:${DATABASE}` });
  try {
    const { key, record } = await createApiKey(store, { account: "bench" });
    const started = performance.now();
    for (let from = 0; from < ROWS; from += IMPORT_BATCH) {
      const batch = Array.from({ length: Math.min(IMPORT_BATCH, ROWS - from) }, (_, i) => submission(from + i));
      await store.importSubmissions(record.accountId, batch);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`database: imported ${ROWS.toLocaleString("en-US")} rows in ${seconds.toFixed(1)} s (${Math.round(ROWS / seconds).toLocaleString("en-US")} rows/s, batches of ${IMPORT_BATCH}, generating them included)`);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(keyFile, key);
    return key;
  } finally {
    await store.close();
  }
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) * 1024;
}

interface ExportRun {
  rows: number;
  bytes: number;
  seconds: number;
  firstByteMs: number;
  baselineRss: number;
  peakRss: number;
  /** The server's CPU time over the wall time: near 100% means the server, not the reader, is the limit. */
  serverCpu: number;
  /** The part of the server's CPU time spent in the kernel for it (reading the file, sending on the socket, page faults). */
  systemShare: number;
}

async function measureExport(url: string, key: string, pid: number, format: "csv" | "ndjson"): Promise<ExportRun> {
  const baselineRss = rssBytes(pid);
  let peakRss = baselineRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(pid))), 20);
  const cpuBefore = cpuTimes(pid);
  const started = performance.now();
  try {
    const response = await fetch(`${url}/api/submission/export?format=${format}&orderBy=created_at`, { headers: { "x-api-key": key } });
    if (!response.ok) throw new Error(`export answered ${response.status}: ${await response.text()}`);
    let firstByteMs = 0;
    let lines = 0;
    let bytes = 0;
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      if (bytes === 0) firstByteMs = performance.now() - started;
      bytes += chunk.byteLength;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    }
    const seconds = (performance.now() - started) / 1000;
    peakRss = Math.max(peakRss, rssBytes(pid));
    // No field of these rows holds a line break, so lines are rows (and the CSV header).
    const cpuAfter = cpuTimes(pid);
    const user = cpuAfter.user - cpuBefore.user;
    const system = cpuAfter.system - cpuBefore.system;
    return {
      rows: format === "csv" ? lines - 1 : lines, bytes, seconds, firstByteMs, baselineRss, peakRss,
      serverCpu: (user + system) / seconds, systemShare: system / Math.max(user + system, 0.01),
    };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * Reads the database file once, so that the operating system's cache holds it as it holds a
 * busy server's data. The other benchmarks of `npm run bench` read gigabytes of their own and
 * can push the file out of the cache; the export that came first would then measure the disk.
 */
function warmFileCache(path: string): void {
  const buffer = new Uint8Array(1 << 20);
  const fd = openSync(path, "r");
  try {
    while (readSync(fd, buffer) > 0);
  } finally {
    closeSync(fd);
  }
}

const key = await database();
warmFileCache(DATABASE);
const FORMATS = ["csv", "ndjson"] as const;

async function exportAll(url: string, pid: number, format: "csv" | "ndjson"): Promise<ExportRun> {
  const run = await measureExport(url, key, pid, format);
  if (run.rows !== ROWS) throw new Error(`${format} export gave ${run.rows} rows, not ${ROWS}`);
  return run;
}

// A user's server meets its first export fresh: each format's first, on a server of its own
// that has served nothing before. Its growth includes what any server fills once (SQLite's page
// cache, V8's young generation), which the warmed runs below leave out.
const firsts = new Map<string, ExportRun>();
for (const format of FORMATS) {
  const { url, child } = await startServerProcess(SERVER, [DATABASE], 0);
  try {
    firsts.set(format, await exportAll(url, child.pid!, format));
  } finally {
    await stopServerProcess(child);
  }
}

const { url, child } = await startServerProcess(SERVER, [DATABASE], 0);
const results: [string, ExportRun][] = [];
try {
  // Warm-up: JIT, SQLite's own page cache, a small export of each format.
  for (const format of FORMATS) {
    await fetch(`${url}/api/submission/export?format=${format}&createdBefore=${new Date(T0 + 31_536 * 20_000).toISOString()}`, { headers: { "x-api-key": key } }).then((r) => r.arrayBuffer());
  }
  for (const format of FORMATS) results.push([format, await exportAll(url, child.pid!, format)]);
} finally {
  await stopServerProcess(child);
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
/** The growth of the format's first export on a fresh server. */
const firstGrowth = (format: string) => firsts.get(format)!.peakRss - firsts.get(format)!.baselineRss;
console.log(
  `\n${formatTable(
    ["format", "rows", "MB", "seconds", "rows/s", "server CPU", "of it system", "first byte ms", "RSS before MB", "RSS peak MB", "growth MB", "first export growth MB"],
    results.map(([format, r]) => [
      format, r.rows.toLocaleString("en-US"), mb(r.bytes), r.seconds.toFixed(2), Math.round(r.rows / r.seconds).toLocaleString("en-US"), `${(100 * r.serverCpu).toFixed(0)}%`, `${(100 * r.systemShare).toFixed(0)}%`,
      r.firstByteMs.toFixed(0), mb(r.baselineRss), mb(r.peakRss), mb(r.peakRss - r.baselineRss), mb(firstGrowth(format)),
    ]),
  )}`,
);
reportTargets(results.map(([format, r]) => {
  const rate = r.rows / r.seconds;
  const growth = (r.peakRss - r.baselineRss) / 1024 / 1024;
  return {
    target: `export ${format}`,
    what: `export of ${ROWS.toLocaleString("en-US")} rows as ${format} (issue 7): rows/s, RSS growth`,
    // Judged warmed: the export's own memory. A fresh server's first export adds caches that do
    // not grow with the export's size (bench/README.md, export.ts), shown beside it.
    measured: `${Math.round(rate).toLocaleString("en-US")} rows/s, +${growth.toFixed(1)} MB (first on a fresh server +${mb(firstGrowth(format))} MB)`,
    goal: ">= 200,000 rows/s, < 64 MB",
    met: rate >= 200_000 && growth < 64,
  };
}));
console.log(
  `\nheadline: export of ${ROWS.toLocaleString("en-US")} submissions - ${results
    .map(([format, r]) => `${format} ${Math.round(r.rows / r.seconds).toLocaleString("en-US")} rows/s, RSS +${mb(r.peakRss - r.baselineRss)} MB (first export on a fresh server +${mb(firstGrowth(format))} MB)`)
    .join("; ")} (targets: >= 200,000 rows/s, < 64 MB)`,
);
