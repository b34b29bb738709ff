/**
 * Child process of bench/memory.ts (run with --expose-gc): fills a memory store with `rows`
 * submissions of the issue-6 data set in one account, and prints one JSON line with this
 * process's memory before and after (each read after full garbage collections), the summed
 * JSON size of what it stored, and how long the import took.
 *
 *   node --expose-gc --import tsx bench/support/memory-store-load.ts <rows>
 */
import { readFileSync } from "node:fs";
import { createMemoryStore } from "../../src/stores/memory.ts";
import type { Submission } from "../../src/submission.ts";
import { generateSubmissions } from "./dataset.ts";

const rows = Number(process.argv[2]);
// Small batches, as requests would bring them: a batch's objects die young instead of being
// promoted to the old generation first, where they would leave holes between the kept rows.
const BATCH = 1000;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

function settledMemory() {
  for (let i = 0; i < 4; i++) gc!();
  const status = readFileSync("/proc/self/status", "utf8");
  const { heapUsed, heapTotal, external } = process.memoryUsage();
  return { rss: Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024, heapUsed, heapTotal, external };
}

const store = createMemoryStore();
const before = settledMemory();
let jsonBytes = 0;
let importMs = 0;
let batch: Submission[] = [];
const flush = async () => {
  const start = performance.now();
  await store.importSubmissions("bench-account", batch);
  importMs += performance.now() - start;
  batch = [];
};
for (const submission of generateSubmissions(rows, 1)) {
  jsonBytes += JSON.stringify(submission).length;
  batch.push(submission);
  if (batch.length === BATCH) await flush();
}
await flush();
const after = settledMemory();
const stored = (await store.listSubmissions("bench-account", { order: "asc", limit: 1, offset: 0 })).total;
if (stored !== rows) throw new Error(`the store holds ${stored} rows, not ${rows}`);
console.log(JSON.stringify({ rows, jsonBytes, importMs, before, after }));
