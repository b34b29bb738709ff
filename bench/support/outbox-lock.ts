/**
 * How long the dispatcher's connection holds the database's write lock per delivery, which the
 * creates' group commits wait for (bench/README.md, webhooks.ts), and its CPU per delivery:
 * two endpoints on a libSQL file opened as `formsink serve`'s webhook thread opens it
 * (cli/webhook-worker.ts), creates in batches on a connection of their own, and after each batch
 * the claims and outcome writes (all succeeded) of its deliveries. No receiver, no HTTP: only
 * the outbox, so that the figure holds still on a busy machine where the HTTP rounds do not.
 *
 *   node --import tsx bench/support/outbox-lock.ts [creates=4000] [batch=32]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import type { ThreadWriteLock } from "../../src/stores/libsql/thread-write-lock.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import { recordDeliveryAttempts, type WebhookRecord } from "../../src/store.ts";

const creates = Number(process.argv[2] ?? 4000);
const batch = Number(process.argv[3] ?? 32);
const ACCOUNT = "acct_bench";
const dir = mkdtempSync(join(tmpdir(), "formsink-outbox-lock-"));
const path = join(dir, "bench.db");

let held = 0;
let since = process.cpuUsage();
let transactions = 0;
/**
 * The dispatcher's side of the write lock, timed by CPU (its transactions run synchronously in
 * this thread), not by the clock, which on a busy machine counts other processes' turns too.
 */
const timedLock: ThreadWriteLock = {
  buffer: new SharedArrayBuffer(16),
  acquire: async () => {
    since = process.cpuUsage();
  },
  acquireBlocking: () => {
    since = process.cpuUsage();
  },
  release: () => {
    const used = process.cpuUsage(since);
    held += used.user + used.system;
    transactions++;
  },
};

const creator = openLibsqlFile(path, { synchronous: true });
const server = await createSqlStore(creator.driver);
const thread = openLibsqlFile(path, { synchronous: true, syncEachCommit: false, writeLock: timedLock });
const outbox = await createSqlStore(thread.driver);
const endpoint = (webhookId: string): WebhookRecord => ({
  webhookId, url: "https://receiver.example/hooks", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
  disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
});
await server.insertWebhook(ACCOUNT, endpoint(`wh_${crypto.randomUUID()}`));
await server.insertWebhook(ACCOUNT, endpoint(`wh_${crypto.randomUUID()}`));
held = 0;
transactions = 0;

let delivered = 0;
let cpu = 0;
for (let made = 0; made < creates; made += batch) {
  for (let i = 0; i < batch; i++) {
    await server.insertSubmission(ACCOUNT, {
      submissionId: crypto.randomUUID(), popupId: "popup", data: { email: "jane@example.com", message: "hello" }, domain: "example.com",
      userAgent: "bench", device: "desktop", status: "pending", createdAt: new Date().toISOString(),
    });
  }
  const start = process.cpuUsage();
  for (;;) {
    const claimed = await outbox.claimDeliveries({ now: Date.now(), limit: 128, leaseMs: 60_000, owner: "bench" });
    if (claimed.length === 0) break;
    const recorded = await recordDeliveryAttempts(outbox, claimed.map((delivery) => ({
      accountId: delivery.accountId, webhookId: delivery.webhook.webhookId, position: delivery.position, owner: "bench", at: Date.now(),
      durationMs: 1, statusCode: 204, error: null, status: "succeeded" as const, nextAttemptAt: null,
    })));
    if (!recorded.every(Boolean)) throw new Error("an outcome was not recorded");
    delivered += claimed.length;
  }
  const used = process.cpuUsage(start);
  cpu += used.user + used.system;
}
await outbox.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  `${delivered} deliveries (2 endpoints, creates in batches of ${batch}): write lock held ${(held / delivered).toFixed(1)} us (CPU) ` +
    `per delivery over ${transactions} transactions; the dispatcher's CPU ${(cpu / delivered).toFixed(1)} us per delivery`,
);
