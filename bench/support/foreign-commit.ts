/**
 * What a commit of another connection to the file costs the creates' next group commit
 * (bench/README.md, webhooks.ts): SQLite drops a WAL connection's whole page cache when it sees
 * that another connection committed since its last transaction, so the statements of the next
 * transaction read their pages again. With endpoints, the dispatcher's thread commits its
 * claims (each with the outcomes of the run before it) on a connection of its own. Creates in groups of `group` (one group commit each) on a libSQL file of
 * `rows` submissions, in blocks alternating between none and one commit of another connection
 * (an update of a webhook's row, as a claim's is) before each group; the CPU of this process
 * per create, the binding's threads included. Alternating in one process, so that a busy
 * machine's drift falls on both.
 *
 *   node --import tsx bench/support/foreign-commit.ts [group=8] [rows=50000] [blocks=10]
 */
import Database from "libsql";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import type { Submission } from "../../src/submission.ts";

const group = Number(process.argv[2] ?? 8);
const rows = Number(process.argv[3] ?? 50_000);
const blocks = Number(process.argv[4] ?? 10);
const GROUPS_PER_BLOCK = 300;
const dir = mkdtempSync(join(tmpdir(), "formsink-foreign-commit-"));
const file = join(dir, "bench.db");
const store = await createLibsqlStore({ url: `file:${file}` });
let made = 0;
const submission = (): Submission => ({
  submissionId: crypto.randomUUID(), popupId: `popup_${made % 5}`, data: { email: `visitor${made}@example.com`, name: `Visitor ${made}` }, domain: "example.com",
  userAgent: "Mozilla/5.0", device: "desktop", status: "pending", createdAt: new Date(Date.UTC(2025, 0, 1) + made++).toISOString(),
});
for (let loaded = 0; loaded < rows; loaded += 5000) await store.importSubmissions("bench", Array.from({ length: Math.min(5000, rows - loaded) }, submission));
await store.insertWebhook("bench", {
  webhookId: "wh_bench", url: "http://127.0.0.1:9/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(), disabledAt: null,
  secrets: ["whsec_bench"], previousSecretExpiresAt: null, failingSince: null,
});
// Opened as the webhook thread opens its connection: WAL, its commits not synced one by one.
const other = new Database(file);
other.exec("PRAGMA journal_mode = WAL");
other.exec("PRAGMA synchronous = NORMAL");
const touch = other.prepare("UPDATE webhooks SET description = ? WHERE id = 'wh_bench'");
const cpu = () => {
  const used = process.cpuUsage();
  return used.user + used.system;
};
const perCreate: Record<"alone" | "after another's commit", number[]> = { alone: [], "after another's commit": [] };
// The first block of each kind warms up and is not counted.
for (let block = 0; block <= blocks; block++) {
  for (const kind of ["alone", "after another's commit"] as const) {
    let spent = 0;
    for (let n = 0; n < GROUPS_PER_BLOCK; n++) {
      if (kind !== "alone") touch.run([String(n)]);
      const before = cpu();
      await Promise.all(Array.from({ length: group }, () => store.insertSubmission("bench", submission())));
      spent += cpu() - before;
    }
    if (block > 0) perCreate[kind].push(spent / (GROUPS_PER_BLOCK * group));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(`${group} creates a group commit, ${rows.toLocaleString("en-US")} rows; CPU per create (us), median of ${blocks} blocks of each, alternating:`);
for (const [kind, values] of Object.entries(perCreate)) console.log(`  ${kind.padEnd(24)} ${median(values).toFixed(1).padStart(6)}   [${values.map((value) => value.toFixed(0)).join(" ")}]`);
const added = median(perCreate["after another's commit"]) - median(perCreate.alone);
console.log(`  another's commit before each group: +${added.toFixed(1)} us per create, +${(added * group).toFixed(0)} us per group commit`);
other.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
