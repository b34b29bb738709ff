/**
 * The store at a million submissions (targets 4-8 of the performance issue), for the libSQL
 * file store and the memory store, each in a process of its own:
 *
 *   node --import tsx bench/store.ts [--quick] [--store libsql|memory]
 *
 * Data (bench/support/dataset.ts): one account of 1,000,000 submissions, 9 accounts of 100,000,
 * and one of 10,000 (to show the list is flat in data size). The big account is bulk-loaded
 * from an NDJSON file through `importSubmissions` (target 8: that is the path imports use); the
 * other accounts go in the same way, untimed. Then, against the big account (and the small one):
 * list page 1 + total for the 16 equality filter combinations in both orders (4), the same with a
 * date range of ~10% of the rows (5), `offset=500000` (6), status updates and deletes (7).
 * `--quick`: a tenth of the data (the flatness check then compares 100k with 1k).
 */
import { createReadStream, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SubmissionFilter, SubmissionQuery, CompleteStore } from "../src/store.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import { createMemoryStore } from "../src/stores/memory.ts";
import type { Submission } from "../src/submission.ts";
import { DATASET_SPAN_MS, DATASET_START, equalityFilterCombinations, generateSubmissions, seededRandom } from "./support/dataset.ts";
import { canPin, formatTable, oneStorePerProcess, pinSelf } from "./support/load.ts";
import { reportTargets, type TargetFigure } from "./support/targets.ts";
import { ms, percentile, timeEach } from "./support/timing.ts";

const quick = process.argv.includes("--quick");
const storeKinds = (process.argv.includes("--store") ? [process.argv[process.argv.indexOf("--store") + 1]] : ["libsql", "memory"]) as StoreKind[];
type StoreKind = "libsql" | "memory";

const BIG = quick ? 100_000 : 1_000_000;
const MEDIUM = quick ? 10_000 : 100_000;
const SMALL = quick ? 1_000 : 10_000;
const DEEP_OFFSET = BIG / 2;
const IMPORT_BATCH = 5000;
const DATA_DIR = fileURLToPath(new URL("./.data/", import.meta.url));

const kind = await oneStorePerProcess(import.meta.url, storeKinds);
pinSelf(0);
console.log(`store: ${kind}; Node ${process.version}; ${canPin() ? "pinned to core 0" : "taskset unavailable: not pinned"}; ` +
  `accounts of ${BIG.toLocaleString("en-US")}, 9 x ${MEDIUM.toLocaleString("en-US")} and ${SMALL.toLocaleString("en-US")} submissions\n`);

/** The big account's rows as NDJSON, written once and reused. */
function ndjsonFile(): string {
  const file = `${DATA_DIR}submissions-${BIG}.ndjson`;
  if (existsSync(file)) return file;
  mkdirSync(DATA_DIR, { recursive: true });
  const lines: string[] = [];
  for (const s of generateSubmissions(BIG, 1)) lines.push(JSON.stringify(s));
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

async function openStore(): Promise<{ store: CompleteStore; cleanup: () => void }> {
  if (kind === "memory") return { store: createMemoryStore(), cleanup: () => {} };
  mkdirSync(DATA_DIR, { recursive: true });
  const file = `${DATA_DIR}store-bench.db`;
  const remove = () => { for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true }); };
  remove();
  return { store: await createLibsqlStore({ url: `file:${file}` }), cleanup: remove };
}

/**
 * Reads NDJSON and imports it in batches: the bulk path, timed from the file. The file is read in
 * chunks and cut at each newline, as an importer would, rather than through `readline`, whose
 * line splitting and events cost more than the `JSON.parse` of the line; only a line that spans
 * two chunks is joined, so no chunk is copied.
 */
async function loadNdjson(store: CompleteStore, accountId: string, file: string): Promise<number> {
  const started = performance.now();
  let batch: Submission[] = [];
  let rest = "";
  /** Parses the line into the batch; true when the batch is full. */
  const take = (line: string): boolean => {
    if (line.trim() !== "") batch.push(JSON.parse(line) as Submission);
    return batch.length === IMPORT_BATCH;
  };
  const flush = async () => {
    await store.importSubmissions(accountId, batch);
    batch = [];
  };
  for await (const chunk of createReadStream(file, { encoding: "utf8" }) as AsyncIterable<string>) {
    let end = chunk.indexOf("\n");
    if (end < 0) {
      rest += chunk;
      continue;
    }
    if (take(rest + chunk.slice(0, end))) await flush();
    let start = end + 1;
    for (end = chunk.indexOf("\n", start); end >= 0; end = chunk.indexOf("\n", start)) {
      if (take(chunk.slice(start, end))) await flush();
      start = end + 1;
    }
    rest = chunk.slice(start);
  }
  take(rest);
  if (batch.length > 0) await flush();
  return performance.now() - started;
}

async function loadGenerated(store: CompleteStore, accountId: string, count: number, seed: number): Promise<void> {
  let batch: Submission[] = [];
  for (const s of generateSubmissions(count, seed)) {
    batch.push(s);
    if (batch.length === IMPORT_BATCH) {
      await store.importSubmissions(accountId, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.importSubmissions(accountId, batch);
}

/** The list queries of target 4 (or, with `range`, 5): every combination, both orders, `rounds` times each. */
function listQueries(rounds: number, extra: (round: number) => Partial<SubmissionQuery> = () => ({})): SubmissionQuery[] {
  const queries: SubmissionQuery[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const filter of equalityFilterCombinations()) {
      for (const order of ["desc", "asc"] as const) queries.push({ ...(filter as SubmissionFilter), order, limit: 10, offset: 0, ...extra(round) });
    }
  }
  return queries;
}

const { store, cleanup } = await openStore();
try {
  const file = ndjsonFile();
  const big = (await store.ensureAccount("big")).id;
  const small = (await store.ensureAccount("small")).id;
  // the process's CPU per row too: on a shared machine the rate moves with the other load
  const cpuBefore = process.cpuUsage();
  const loadMs = await loadNdjson(store, big, file);
  const cpu = process.cpuUsage(cpuBefore);
  const loadRate = BIG / (loadMs / 1000);
  console.log(`bulk load: ${BIG.toLocaleString("en-US")} rows from NDJSON in ${(loadMs / 1000).toFixed(1)} s (${Math.round(loadRate).toLocaleString("en-US")} rows/s, ` +
    `${((cpu.user + cpu.system) / BIG).toFixed(1)} us of CPU a row)`);
  for (let i = 0; i < 9; i++) await loadGenerated(store, (await store.ensureAccount(`medium-${i}`)).id, MEDIUM, 100 + i);
  await loadGenerated(store, small, SMALL, 2);
  console.log("other accounts loaded\n");

  const rows: string[][] = [];
  const figures: TargetFigure[] = [];
  const list = (accountId: string) => (query: SubmissionQuery) => store.listSubmissions(accountId, query);

  // 4: page 1 + total, every equality combination, both orders; flat from SMALL to BIG. Each set
  // is run once untimed first: V8 compiles the list's code during its first few hundred calls,
  // on a thread that shares the pinned core, as the HTTP benchmarks' warm-up lets it finish.
  const lists = listQueries(20);
  const atBig = await timeEach(lists, list(big), lists.length);
  const atSmall = await timeEach(lists, list(small), lists.length);
  const [p50, p99, p50Small] = [percentile(atBig, 50), percentile(atBig, 99), percentile(atSmall, 50)];
  rows.push(["list page 1 + total, 16 filters x 2 orders", BIG.toLocaleString("en-US"), String(atBig.length), ms(p50), ms(p99)]);
  rows.push(["list page 1 + total, 16 filters x 2 orders", SMALL.toLocaleString("en-US"), String(atSmall.length), ms(p50Small), ms(percentile(atSmall, 99))]);
  figures.push({ target: 4, what: `${kind}: list + total at ${BIG.toLocaleString("en-US")}, p50 / p99`, measured: `${ms(p50)} / ${ms(p99)}`, goal: "<= 2 ms / <= 5 ms", met: p50 <= 2 && p99 <= 5 });
  const flatness = p50 / p50Small;
  figures.push({ target: 4, what: `${kind}: p50 at ${BIG.toLocaleString("en-US")} / p50 at ${SMALL.toLocaleString("en-US")}`, measured: `${flatness.toFixed(2)}x`, goal: "<= 2x", met: flatness <= 2 });

  // 5: a date range of ~10% of the rows (a tenth of the year, at a random place)
  const random = seededRandom(5);
  const ranged = await timeEach(listQueries(5, () => {
    const after = DATASET_START + Math.floor(random() * 0.9 * DATASET_SPAN_MS);
    return { createdAfter: after, createdBefore: after + DATASET_SPAN_MS / 10 };
  }), list(big), 16);
  const p50Range = percentile(ranged, 50);
  rows.push(["list + total, ~10% date range", BIG.toLocaleString("en-US"), String(ranged.length), ms(p50Range), ms(percentile(ranged, 99))]);
  figures.push({ target: 5, what: `${kind}: list + total with a ~10% date range, p50`, measured: ms(p50Range), goal: "<= 10 ms", met: p50Range <= 10 });

  // 6: offset = half the account, for the filters that reach that deep (no filter, the big status and device)
  const deepFilters: SubmissionFilter[] = [{}, { status: "pending" }, { device: "desktop" }];
  const deepQueries = Array.from({ length: 5 }, () => deepFilters.flatMap((filter) =>
    (["desc", "asc"] as const).map((order): SubmissionQuery => ({ ...filter, order, limit: 10, offset: DEEP_OFFSET })))).flat();
  const deep = await timeEach(deepQueries, list(big), 6);
  const p50Deep = percentile(deep, 50);
  rows.push([`list + total, offset=${DEEP_OFFSET}`, BIG.toLocaleString("en-US"), String(deep.length), ms(p50Deep), ms(percentile(deep, 99))]);
  figures.push({ target: 6, what: `${kind}: offset=${DEEP_OFFSET.toLocaleString("en-US")}, p50`, measured: ms(p50Deep), goal: "<= 25 ms", met: p50Deep <= 25 });

  // 7: status updates and deletes of rows spread over the account
  const page = await store.listSubmissions(big, { order: "desc", limit: 100, offset: 0 });
  const ids = [...page.items, ...(await store.listSubmissions(big, { order: "asc", limit: 100, offset: Math.floor(BIG / 3) })).items].map((s) => s.submissionId);
  const updates = await timeEach(ids, (id) => store.setSubmissionStatus(big, id, "completed"));
  const deletes = await timeEach(ids, (id) => store.deleteSubmission(big, id));
  const [p50Update, p50Delete] = [percentile(updates, 50), percentile(deletes, 50)];
  rows.push(["status update", BIG.toLocaleString("en-US"), String(updates.length), ms(p50Update), ms(percentile(updates, 99))]);
  rows.push(["delete", BIG.toLocaleString("en-US"), String(deletes.length), ms(p50Delete), ms(percentile(deletes, 99))]);
  figures.push({ target: 7, what: `${kind}: status update / delete, p50`, measured: `${ms(p50Update)} / ${ms(p50Delete)}`, goal: "<= 1 ms each", met: p50Update <= 1 && p50Delete <= 1 });
  figures.push({ target: 8, what: `${kind}: bulk load from NDJSON`, measured: `${Math.round(loadRate).toLocaleString("en-US")} rows/s`, goal: ">= 100,000 rows/s", met: loadRate >= 100_000 });

  console.log(formatTable(["operation", "account rows", "calls", "p50", "p99"], rows));
  reportTargets(figures);
  console.log(`\nheadline: ${kind} store at ${BIG.toLocaleString("en-US")} rows - list+total p50 ${ms(p50)} p99 ${ms(p99)} (${flatness.toFixed(2)}x of ${SMALL.toLocaleString("en-US")}), date range ${ms(p50Range)}, offset ${ms(p50Deep)}, update ${ms(p50Update)}, delete ${ms(p50Delete)}, bulk ${Math.round(loadRate).toLocaleString("en-US")} rows/s`);
} finally {
  await store.close();
  cleanup();
}
