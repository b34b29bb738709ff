/**
 * The change log: how fast does a reader follow `GET /api/events` (pages of 1000, through the
 * handler in process, on a libSQL file)? `--quick`: 20,000 events instead of 200,000.
 *
 *   node --import tsx bench/events.ts [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey } from "../src/auth/keys.ts";
import { createSubmissionsHandler } from "../src/handler.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import type { Submission } from "../src/submission.ts";
import { reportTargets } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const EVENTS = quick ? 20_000 : 200_000;
const PAGE = 1000;

const submission = (i: number): Submission => ({
  submissionId: crypto.randomUUID(),
  popupId: `popup_${i % 5}`,
  data: { email: `visitor${i}@example.com`, name: `Visitor ${i}`, consent: i % 3 !== 0 },
  domain: "example.com",
  userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
  device: "desktop",
  status: "pending",
  createdAt: new Date(Date.UTC(2025, 0, 1) + i).toISOString(),
});

const dir = mkdtempSync(join(tmpdir(), "formsink-bench-events-"));
try {
  const store = await createLibsqlStore({ url: `file:${join(dir, "events.db")}` });
  const { key, record } = await createApiKey(store, { account: "bench", kind: "secret" });
  for (let from = 0; from < EVENTS; from += 5000) {
    await store.importSubmissions(record.accountId, Array.from({ length: 5000 }, (_, i) => submission(from + i)));
  }
  const handler = createSubmissionsHandler(store);
  let best = 0;
  for (let round = 0; round < 3; round++) {
    let read = 0;
    let cursor = "";
    const started = performance.now();
    for (;;) {
      const response = await handler(new Request(`http://bench.test/api/events?limit=${PAGE}${cursor && `&after=${cursor}`}`, { headers: { "x-api-key": key } }));
      const page = (await response.json()) as { items: unknown[]; nextCursor: string };
      read += page.items.length;
      cursor = page.nextCursor;
      if (page.items.length < PAGE) break;
    }
    if (read !== EVENTS) throw new Error(`read ${read} events, expected ${EVENTS}`);
    best = Math.max(best, read / ((performance.now() - started) / 1000));
  }
  console.log(`GET /api/events, pages of ${PAGE}, ${EVENTS.toLocaleString("en-US")} events: ${Math.round(best).toLocaleString("en-US")} events/s (best of 3)`);
  await store.close();
  reportTargets([
    { target: "events-feed", what: "feed read (GET /api/events, in process)", measured: `${Math.round(best).toLocaleString("en-US")} events/s`, goal: ">= 100,000 events/s", met: best >= 100_000 },
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
