/**
 * How long the dispatcher's connection holds the database's write lock per delivery, which the
 * creates' group commits wait for (bench/README.md, webhooks.ts), and its CPU per delivery:
 * two endpoints on a libSQL file opened as `formsink serve`'s webhook thread opens it
 * (cli/webhook-worker.ts), creates in batches on a connection of their own, and after each batch
 * the claims and outcome writes (all succeeded) of its deliveries. No receiver, no HTTP: only
 * the outbox, so that the figure holds still on a busy machine where the HTTP rounds do not.
 * Blocks of creates alternate two ways of writing: "together" as the dispatcher does under a
 * stream of changes (each batch's claim writes the previous batch's outcomes in its transaction,
 * `recordAndClaimDeliveries`), and "apart" (a claim, then its outcomes: two transactions).
 *
 *   node --import tsx bench/support/outbox-lock.ts [creates=4000] [batch=32] [blocks=8]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import type { ThreadWriteLock } from "../../src/stores/libsql/thread-write-lock.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import { type ClaimedDelivery, type DeliveryAttempt, recordAndClaimDeliveries, recordDeliveryAttempts, type WebhookRecord } from "../../src/store.ts";

const creates = Number(process.argv[2] ?? 4000);
const batch = Number(process.argv[3] ?? 32);
const blocks = Number(process.argv[4] ?? 8);
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

const succeeded = (claimed: readonly ClaimedDelivery[]): DeliveryAttempt[] =>
  claimed.map((delivery) => ({
    accountId: delivery.accountId, webhookId: delivery.webhook.webhookId, position: delivery.position, owner: "bench", at: Date.now(),
    durationMs: 1, statusCode: 204, error: null, status: "succeeded" as const, nextAttemptAt: null,
  }));
const claim = () => ({ now: Date.now(), limit: 128, leaseMs: 60_000, owner: "bench" });
const mustAll = (recorded: readonly boolean[]) => {
  if (!recorded.every(Boolean)) throw new Error("an outcome was not recorded");
};
const insertBatch = async () => {
  for (let i = 0; i < batch; i++) {
    await server.insertSubmission(ACCOUNT, {
      submissionId: crypto.randomUUID(), popupId: "popup", data: { email: "jane@example.com", message: "hello" }, domain: "example.com",
      userAgent: "bench", device: "desktop", status: "pending", createdAt: new Date().toISOString(),
    });
  }
};

const ways = {
  apart: { held: 0, transactions: 0, cpu: 0, delivered: 0 },
  together: { held: 0, transactions: 0, cpu: 0, delivered: 0 },
};
const perBlock = Math.max(batch, Math.round(creates / blocks / batch) * batch);
for (let block = 0; block < blocks; block++) {
  const way = block % 2 === 0 ? "apart" : "together";
  const tally = ways[way];
  held = 0;
  transactions = 0;
  /** Together: the outcomes of the last batch's deliveries, written by the next claim. */
  let waiting: DeliveryAttempt[] = [];
  for (let made = 0; made < perBlock; made += batch) {
    await insertBatch();
    const start = process.cpuUsage();
    if (way === "apart") {
      for (;;) {
        const claimed = await outbox.claimDeliveries(claim());
        if (claimed.length === 0) break;
        mustAll(await recordDeliveryAttempts(outbox, succeeded(claimed)));
        tally.delivered += claimed.length;
      }
    } else {
      const { recorded, claimed } = await recordAndClaimDeliveries(outbox, waiting, claim());
      mustAll(recorded);
      waiting = succeeded(claimed);
      tally.delivered += claimed.length;
    }
    const used = process.cpuUsage(start);
    tally.cpu += used.user + used.system;
  }
  if (waiting.length > 0) {
    const start = process.cpuUsage();
    mustAll(await recordDeliveryAttempts(outbox, waiting));
    const used = process.cpuUsage(start);
    tally.cpu += used.user + used.system;
  }
  tally.held += held;
  tally.transactions += transactions;
}
await outbox.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
for (const [way, { held, transactions, cpu, delivered }] of Object.entries(ways)) {
  console.log(
    `${way}: ${delivered} deliveries (2 endpoints, creates in batches of ${batch}): write lock held ${(held / delivered).toFixed(1)} us (CPU) ` +
      `per delivery over ${transactions} transactions (${(transactions / delivered * 100).toFixed(1)} per 100 deliveries); ` +
      `the dispatcher's CPU ${(cpu / delivered).toFixed(1)} us per delivery`,
  );
}
