/**
 * Privacy (issue 21), on the libSQL file store as `formsink serve` runs it:
 * - erasure by email: the time of one erasure (find, delete, receipt) at 1,000 rows and at
 *   1,000,000 rows (100,000 with --quick), p50 over many erasures of one person each;
 * - retention deleting 100,000 old rows (20,000 with --quick) while creates run: the creates'
 *   p99 latency with the retention job running, next to their p99 without it.
 *
 *   node --import tsx bench/privacy.ts [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { erase } from "../src/privacy/erasure.ts";
import { createRetentionJob } from "../src/privacy/retention.ts";
import type { CompleteStore } from "../src/store.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import type { Submission } from "../src/submission.ts";
import { reportTargets, type TargetFigure } from "./support/targets.ts";
import { percentile } from "./support/timing.ts";

const quick = process.argv.includes("--quick");
const LARGE = quick ? 100_000 : 1_000_000;
const OLD_ROWS = quick ? 20_000 : 100_000;
const ERASURES = 50;
const ACCOUNT = "bench-account";
const DAY = 24 * 60 * 60_000;

function row(i: number, createdAt: number): Submission {
  return {
    submissionId: crypto.randomUUID(),
    popupId: `popup_${i % 10}`,
    data: { email: `User${i}@Example.com`, name: `Person ${i}`, consent: true },
    domain: "example.com",
    userAgent: "Mozilla/5.0 (X11; Linux x86_64)",
    device: "desktop",
    status: i % 2 === 0 ? "completed" : "pending",
    createdAt: new Date(createdAt).toISOString(),
  };
}

async function withStore<T>(use: (store: CompleteStore) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "formsink-bench-privacy-"));
  const store = await createLibsqlStore({ url: `file:${join(dir, "bench.db")}` });
  try {
    return await use(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function fill(store: CompleteStore, count: number, createdAt: (i: number) => number): Promise<void> {
  for (let from = 0; from < count; from += 5000) {
    await store.importSubmissions(ACCOUNT, Array.from({ length: Math.min(5000, count - from) }, (_, k) => row(from + k, createdAt(from + k))));
  }
}


async function erasureP50(rows: number): Promise<number> {
  return withStore(async (store) => {
    const started = performance.now();
    await fill(store, rows, (i) => Date.UTC(2025, 0, 1) + i * 1000);
    console.log(`  ${rows.toLocaleString("en")} rows written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await store.erasureHashKey();
    const times: number[] = [];
    for (let k = 0; k < ERASURES; k++) {
      const i = Math.floor(((k + 0.5) / ERASURES) * rows);
      const t = performance.now();
      const receipt = await erase(store, ACCOUNT, { field: "email", value: `user${i}@example.com` });
      times.push(performance.now() - t);
      if (receipt.deleted !== 1) throw new Error(`erasure of user${i} deleted ${receipt.deleted}`);
    }
    const p50 = percentile(times, 50);
    console.log(`  erasure at ${rows.toLocaleString("en")} rows: p50 ${p50.toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms`);
    return p50;
  });
}

/** Creates back to back from `workers` callers until `until` resolves; their latencies. */
async function createsDuring(store: CompleteStore, until: Promise<unknown>, workers = 4): Promise<number[]> {
  const times: number[] = [];
  let done = false;
  void until.then(() => (done = true));
  let n = 0;
  await Promise.all(Array.from({ length: workers }, async () => {
    while (!done) {
      const t = performance.now();
      await store.insertSubmission(ACCOUNT, row(10_000_000 + n++, Date.now()));
      times.push(performance.now() - t);
    }
  }));
  return times;
}

async function retentionUnderCreates(): Promise<{ without: number; withJob: number; seconds: number }> {
  return withStore(async (store) => {
    const now = Date.now();
    await fill(store, OLD_ROWS, (i) => now - 400 * DAY + i);
    await store.setRetentionRules(ACCOUNT, [{ olderThanDays: 365 }]);
    // A warm-up first: right after the fill, the database is still settling (checkpoints).
    await createsDuring(store, new Promise((resolve) => setTimeout(resolve, 1000)));
    const baseline = await createsDuring(store, new Promise((resolve) => setTimeout(resolve, 3000)));
    const started = performance.now();
    const job = createRetentionJob(store).runOnce();
    const during = await createsDuring(store, job);
    const { deleted } = await job;
    const seconds = (performance.now() - started) / 1000;
    if (deleted !== OLD_ROWS) throw new Error(`retention deleted ${deleted} of ${OLD_ROWS}`);
    const without = percentile(baseline, 99);
    const withJob = percentile(during, 99);
    console.log(`  creates without retention: ${baseline.length} in 3 s, p50 ${percentile(baseline, 50).toFixed(2)} ms, p99 ${without.toFixed(2)} ms`);
    console.log(`  creates while retention deleted ${deleted.toLocaleString("en")} rows in ${seconds.toFixed(1)} s: ${during.length}, p50 ${percentile(during, 50).toFixed(2)} ms, p99 ${withJob.toFixed(2)} ms`);
    return { without, withJob, seconds };
  });
}

console.log("erasure by email (libSQL file)");
const small = await erasureP50(1000);
const large = await erasureP50(LARGE);
console.log("retention while creates run (libSQL file)");
const retention = await retentionUnderCreates();

const figures: TargetFigure[] = [
  {
    target: "privacy-1",
    what: `erasure by email at ${LARGE.toLocaleString("en")} rows, p50 (${small.toFixed(2)} ms at 1,000)`,
    measured: `${large.toFixed(2)} ms`,
    goal: "<= 20 ms",
    met: large <= 20,
  },
  {
    target: "privacy-2",
    what: `create p99 while retention deletes ${OLD_ROWS.toLocaleString("en")} rows, vs without`,
    measured: `${(retention.withJob / retention.without).toFixed(2)}x (${retention.withJob.toFixed(2)} vs ${retention.without.toFixed(2)} ms)`,
    goal: "<= 2x",
    met: retention.withJob <= 2 * retention.without,
  },
];
reportTargets(figures);
