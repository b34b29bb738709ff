/**
 * The thread `formsink serve` sends webhook deliveries from (./webhook-thread.ts starts it): a
 * dispatcher on a connection of its own to the database, so that signing, posting and the
 * outbox's claims and outcome writes never take the request thread's time. Nothing here is
 * shared with the server but the database: a crash of the process loses nothing the outbox and
 * its leases do not already cover.
 */
import { readlinkSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { createWebhookTransport } from "../adapters/webhook-transport.ts";
import { threadWriteLock } from "../src/stores/libsql/thread-write-lock.ts";
import { createWebhookDispatcher } from "../src/webhooks/dispatcher.ts";
import { messageOf } from "./usage.ts";
import { openDatabase } from "./database.ts";
import type { ThreadMessage, WebhookThreadData } from "./webhook-thread.ts";

/** Deliveries claimed and not yet attempted at once. */
const CONCURRENCY = 128;

const port = parentPort!;
const { url, env, leaseMs, endpointConcurrency, pollIntervalMs, allowPrivate, wakeFlag, writeLock } = workerData as WebhookThreadData;
const tell = (message: ThreadMessage) => port.postMessage(message);
const woken = new Int32Array(wakeFlag);

const store = await openDatabase(url, {
  env,
  stderr: (line) => tell({ type: "warn", message: line }),
  // Not synced commit by commit: a claim or an outcome lost to a power loss is a delivery sent
  // again (at least once), and a sync each would hold the write lock the creates wait for.
  connection: { synchronous: true, poolSize: 2, writeLock: threadWriteLock(writeLock), syncEachCommit: false },
});
const transport = createWebhookTransport({ allowPrivate });
const dispatcher = createWebhookDispatcher(store, {
  transport,
  leaseMs,
  endpointConcurrency,
  pollIntervalMs,
  // Larger claims than a library user's default: under a stream of changes each claim and each
  // write of outcomes then covers more deliveries, and this thread has nothing else to wait for.
  concurrency: CONCURRENCY,
  onError: (error) => tell({ type: "warn", message: `webhook deliveries failed (tried again shortly): ${messageOf(error)}` }),
  onAttempt: (report) => {
    if (report.disabled) tell({ type: "disabled", webhookId: report.webhookId, reason: report.disabled });
  },
});

port.on("message", (message: "wake" | "stop") => {
  if (message === "wake") {
    // Cleared before the dispatcher looks: a change committed from here on posts a new wake.
    Atomics.store(woken, 0, 0);
    dispatcher.wake();
    return;
  }
  void (async () => {
    try {
      await dispatcher.stop();
      transport.close();
    } finally {
      await store.close();
      tell({ type: "stopped" });
    }
  })();
});
dispatcher.start();
tell({ type: "ready", threadId: linuxThreadId() });

/** This thread's id on Linux (for `taskset -p`, as bench/webhooks.ts pins it); undefined elsewhere. */
function linuxThreadId(): number | undefined {
  try {
    return Number(readlinkSync("/proc/thread-self").split("/").at(-1));
  } catch {
    return undefined;
  }
}
