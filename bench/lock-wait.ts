// GET /api/health while another process holds the database's write lock for 10 s: how long
// each answer takes, and how soon after the release a create succeeds again.
// Run: node --import tsx bench/lock-wait.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, holdWriteLock, newKey, serve } from "../test/faults/support.ts";

const HOLD_MS = 10_000;

const dir = mkdtempSync(join(tmpdir(), "formsink-lock-bench-"));
const path = join(dir, "live.db");
const key = await newKey(`file:${path}`);
const server = await serve(["--db", `file:${path}`]);
try {
  const held = await holdWriteLock(path, HOLD_MS);
  let released = false;
  let releasedAt = 0;
  void held.released.then(() => {
    released = true;
    releasedAt = performance.now();
  });
  // Writers keep waiting for the lock the whole time, as a popup's visitors would.
  const writers = (async () => {
    const statuses: number[] = [];
    while (!released) statuses.push((await create(server.url, key, "during@example.com")).status);
    return statuses;
  })();
  const latencies: number[] = [];
  while (!released) {
    const started = performance.now();
    const answer = await fetch(`${server.url}/api/health`);
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`health answered ${answer.status}`);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  let recoveredMs = 0;
  for (;;) {
    const answer = await create(server.url, key, "after@example.com");
    if (answer.status === 201) {
      recoveredMs = performance.now() - releasedAt;
      break;
    }
  }
  const during = await writers;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
  console.log(`health answers during a ${HOLD_MS / 1000} s lock: ${latencies.length}, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`);
  console.log(`creates during the lock: ${during.filter((s) => s === 503).length} answered 503, ${during.filter((s) => s === 201).length} answered 201`);
  console.log(`headline: health p99 ${at(0.99)} ms under a held lock; first create after release succeeded ${recoveredMs.toFixed(0)} ms after it`);
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
