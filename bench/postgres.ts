/**
 * The PostgreSQL store at a million submissions (issue 20's targets), on a throwaway cluster of
 * this machine's PostgreSQL started for the run (test/support/postgres.ts) with durable
 * settings (fsync and synchronous_commit on):
 *
 *   node --import tsx bench/postgres.ts [--quick]
 *
 * One account of 1,000,000 submissions (bench/support/dataset.ts), bulk-loaded through
 * `importSubmissions` in batches of 5,000 (timed: the import path). Then list page 1 + total for
 * each of the 16 equality filter combinations in both orders (the worst combination's p50 is
 * the figure), get by id, and durable creates over HTTP: `formsink/node` on the database, 10
 * connections, as a share of a raw node:http server that parses the same body (bench/http.ts's
 * baseline), each server alone in its own process on core 0, autocannon on core 1.
 * `--quick`: a tenth of the data and 3 s runs.
 */
import postgres from "postgres";
import { createApiKey } from "../src/auth/keys.ts";
import type { SubmissionFilter, SubmissionQuery } from "../src/store.ts";
import { createPostgresStore } from "../src/stores/postgres/index.ts";
import type { Submission } from "../src/submission.ts";
import { startPostgresCluster } from "../test/support/postgres.ts";
import { equalityFilterCombinations, generateSubmissions, seededRandom } from "./support/dataset.ts";
import { createRequest, measure } from "./support/http-setup.ts";
import { canPin, formatTable, pinSelf, startServerProcess, stopServerProcess } from "./support/load.ts";
import { reportTargets, type TargetFigure } from "./support/targets.ts";
import { ms, percentile, timeEach } from "./support/timing.ts";

const quick = process.argv.includes("--quick");
const ROWS = quick ? 100_000 : 1_000_000;
const SECONDS = quick ? 3 : 10;
const IMPORT_BATCH = 5000;
const RAW_SERVER = new URL("./support/bridge-server.ts", import.meta.url);
const FORMSINK_SERVER = new URL("./support/postgres-server.ts", import.meta.url);

pinSelf(1);
const cluster = await startPostgresCluster({ fsync: "on", synchronous_commit: "on", full_page_writes: "on", shared_buffers: "512MB" });
const database = await cluster.createDatabase();
const version = await (async () => {
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  const [row] = await sql`SHOW server_version`;
  await sql.end();
  return String(row!.server_version);
})();
console.log(
  `PostgreSQL ${version} (throwaway cluster, fsync on); Node ${process.version}; ${canPin() ? "server on core 0, load on core 1" : "taskset unavailable: not pinned"}; ` +
    `${ROWS.toLocaleString("en-US")} submissions, ${SECONDS} s HTTP runs, 10 connections\n`,
);

const rows: string[][] = [];
const figures: TargetFigure[] = [];
const store = await createPostgresStore({ url: database.url });
let key: string;
try {
  const { key: secret, record } = await createApiKey(store, { account: "bench" });
  key = secret;
  const account = record.accountId;

  // Bulk import, timed from the first batch to the last commit. The next batch is made while
  // the previous one is in the database, as a reader of a file reads ahead: one call at a time
  // still, each sent once the one before it has committed.
  const ids: string[] = [];
  let batch: Submission[] = [];
  let inFlight: Promise<unknown> = Promise.resolve();
  const databaseCpuBefore = cluster.cpuSeconds();
  const ownCpuBefore = process.cpuUsage();
  const started = performance.now();
  for (const submission of generateSubmissions(ROWS)) {
    batch.push(submission);
    ids.push(submission.submissionId);
    if (batch.length === IMPORT_BATCH) {
      const ready = batch;
      await inFlight;
      inFlight = store.importSubmissions(account, ready);
      await new Promise((resolve) => setImmediate(resolve)); // the call is on the wire before the next batch is made
      batch = [];
    }
  }
  await inFlight;
  if (batch.length > 0) await store.importSubmissions(account, batch);
  const importRate = ROWS / ((performance.now() - started) / 1000);
  const ownCpu = process.cpuUsage(ownCpuBefore);
  console.log(
    `bulk import: ${ROWS.toLocaleString("en-US")} rows at ${Math.round(importRate).toLocaleString("en-US")} rows/s; CPU per row: ` +
      `PostgreSQL ${(((cluster.cpuSeconds() - databaseCpuBefore) * 1e6) / ROWS).toFixed(1)} us, ` +
      `this process (making the rows and encoding them) ${((ownCpu.user + ownCpu.system) / ROWS).toFixed(1)} us`,
  );
  {
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    await sql`VACUUM ANALYZE`; // what autovacuum does after a bulk load, done now so the figures below do not depend on its timing
    await sql.end();
  }

  // List page 1 + total: every equality combination, both orders; the worst combination's p50.
  const byCombination = new Map<string, number[]>();
  for (const filter of equalityFilterCombinations()) {
    for (const order of ["desc", "asc"] as const) {
      const query: SubmissionQuery = { ...(filter as SubmissionFilter), order, limit: 10, offset: 0 };
      byCombination.set(JSON.stringify(query), await timeEach(Array(20).fill(query), (q: SubmissionQuery) => store.listSubmissions(account, q), 3));
    }
  }
  const p50s = [...byCombination].map(([query, times]) => ({ query, p50: percentile(times, 50) }));
  const worst = p50s.reduce((a, b) => (b.p50 > a.p50 ? b : a));
  const all = [...byCombination.values()].flat();
  rows.push(["list page 1 + total, 16 filters x 2 orders", String(all.length), ms(percentile(all, 50)), ms(percentile(all, 99))]);
  rows.push([`  worst combination: ${worst.query}`, "20", ms(worst.p50), ""]);
  figures.push({ target: "postgres", what: "PostgreSQL: list + total, worst filter combination, p50", measured: ms(worst.p50), goal: "<= 5 ms", met: worst.p50 <= 5 });

  // Get by id, ids all over the account.
  const random = seededRandom(7);
  const picks = Array.from({ length: 2000 }, () => ids[Math.floor(random() * ids.length)]!);
  const gets = await timeEach(picks, (id) => store.getSubmission(account, id), 100);
  const p50Get = percentile(gets, 50);
  rows.push(["get by id", String(gets.length), ms(p50Get), ms(percentile(gets, 99))]);
  figures.push({ target: "postgres", what: "PostgreSQL: get by id, p50", measured: ms(p50Get), goal: "<= 1 ms", met: p50Get <= 1 });
  figures.push({
    target: "postgres",
    what: "PostgreSQL: bulk import",
    measured: `${Math.round(importRate).toLocaleString("en-US")} rows/s`,
    goal: ">= 50,000 rows/s",
    met: importRate >= 50_000,
  });
} finally {
  await store.close();
}

// Durable creates over HTTP, as a share of raw node:http parsing the same body (bench/http.ts's create baseline).
async function creates(script: URL, args: string[]) {
  const { url, child } = await startServerProcess(script, args, 0);
  try {
    const { method, headers, body } = createRequest(key!);
    return await measure(args[0]!, { method, headers, body }, `${url}/api/submission`, child.pid!, SECONDS, () => cluster.cpuSeconds());
  } finally {
    await stopServerProcess(child);
  }
}
const raw = (await creates(RAW_SERVER, ["raw node:http"])).requestsPerSecond;
const formsink = await creates(FORMSINK_SERVER, [database.url]);
const created = formsink.requestsPerSecond;
const share = created / raw;
console.log(
  `durable create: CPU per create: the formsink server ${formsink.serverMicros.toFixed(0)} us, PostgreSQL ${formsink.databaseMicros!.toFixed(0)} us`,
);
rows.push(["raw node:http, parse JSON body, 201 (req/s)", "", Math.round(raw).toLocaleString("en-US"), ""]);
rows.push(["durable create through formsink/node (req/s)", "", Math.round(created).toLocaleString("en-US"), `${(100 * share).toFixed(0)}% of raw`]);
figures.push({
  target: "postgres",
  what: "PostgreSQL: durable create, 10 connections, share of raw",
  measured: `${(100 * share).toFixed(0)}% (${Math.round(created).toLocaleString("en-US")} req/s)`,
  goal: ">= 25%",
  met: share >= 0.25,
});

await database.drop();
await cluster.stop();
console.log(formatTable(["operation", "calls", "p50", "p99"], rows));
reportTargets(figures);
