/**
 * An export hands the event loop back between its pages, so that a server streaming a large
 * export still answers its other requests (src/export/export.ts, `betweenPages`).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openExport } from "../../src/export/export.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import type { Submission } from "../../src/submission.ts";

const t = suite("export: the event loop between pages");

const ACCOUNT = "acct-export-turns";

const rows: Submission[] = Array.from({ length: 200 }, (_, i) => ({
  submissionId: `s-${String(i).padStart(4, "0")}`,
  popupId: "popup",
  data: { email: `lead${i}@example.com` },
  domain: "example.com",
  userAgent: "test",
  device: "desktop",
  status: "pending",
  createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
}));

for (const format of ["csv", "ndjson"] as const) {
  t(`${format}: work the loop has waiting runs before the last page is read`, async () => {
    const store = createMemoryStore();
    await store.importSubmissions(ACCOUNT, rows);
    // The smallest pages, so that the export is many of them; the memory store answers each
    // at once, as a SQLite file read synchronously does.
    const reader = (await openExport(store, ACCOUNT, { format, filter: {}, order: "asc", pageSize: 16 })).getReader();
    let chunks = 0;
    let chunksWhenOtherWorkRan = -1;
    setImmediate(() => (chunksWhenOtherWorkRan = chunks));
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      chunks++;
    }
    assert.ok(chunks > 10, `${chunks} pages`);
    assert.ok(chunksWhenOtherWorkRan >= 0 && chunksWhenOtherWorkRan < chunks, `the waiting work ran after ${chunksWhenOtherWorkRan} of ${chunks} pages`);
  });
}

t.run();
