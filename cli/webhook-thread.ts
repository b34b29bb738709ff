/**
 * `formsink serve`'s webhook dispatcher in a thread of its own (./webhook-worker.ts), on its
 * own connection to the database: deliveries then cost the request thread one message per
 * batch of changes, not the signing, posting and outbox writes of each, and they go out at the
 * pace of the receiver, not of the request thread's turns. The memory store cannot be reached
 * from another thread: serve keeps that one's dispatcher in-process.
 */
import { Worker } from "node:worker_threads";
import { releaseAbandonedSide } from "../src/stores/libsql/thread-write-lock.ts";

export interface WebhookThreadData {
  url: string;
  env: Record<string, string | undefined>;
  leaseMs: number;
  /** The dispatcher's `endpointConcurrency` (`--endpoint-concurrency`). */
  endpointConcurrency: number;
  /** The dispatcher's `pollIntervalMs` (`--webhook-poll`). */
  pollIntervalMs: number;
  allowPrivate: boolean;
  /** One Int32 that is 1 while a wake is posted and not yet taken: changes in between post no more. */
  wakeFlag: SharedArrayBuffer;
  /** The `ThreadWriteLock` the server's own connection to a libSQL file takes. */
  writeLock: SharedArrayBuffer;
}

export type ThreadMessage =
  | { type: "ready"; threadId: number | undefined }
  | { type: "warn"; message: string }
  | { type: "disabled"; webhookId: string; reason: "gone" | "failing" }
  | { type: "stopped" };

export interface WebhookThreadOptions extends Omit<WebhookThreadData, "wakeFlag"> {
  warn: (message: string) => void;
  onDisabled: (webhookId: string, reason: "gone" | "failing") => void;
  /**
   * The worker's module; default the one beside this file. bench/support/webhook-server.ts runs
   * this file from its TypeScript and gives dist/'s bundled worker, the one `formsink serve` runs.
   */
  workerModule?: URL;
}

export interface WebhookThread {
  /** Resolves to the thread's Linux thread id (for pinning it to a core; undefined elsewhere) once it runs; rejects when it could not start. */
  ready: Promise<number | undefined>;
  /** Tells the thread a change was committed (the handler's `onChange`). */
  wake(): void;
  /** Stops the thread once its attempts in flight are recorded and its connection closed. */
  stop(): Promise<void>;
}

/** A thread that failed after its start is started again after this long. */
const RESTART_AFTER_MS = 1000;
/** How long a stop waits for the thread to finish its attempts and close its connection before ending it. */
const STOP_WAIT_MS = 15_000;

/**
 * The worker from its file beside this one: JavaScript in dist/ (the bundled bin included), or
 * TypeScript in a checkout, which Node runs through tsx, registered in the worker by hand: the
 * `--import tsx` a Node 20 process was started with does not reach its workers.
 */
function newWorker(workerData: WebhookThreadData, workerModule: URL | undefined): Worker {
  if (workerModule) return new Worker(workerModule, { workerData });
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./webhook-worker.js", import.meta.url), { workerData });
  const source = new URL("./webhook-worker.ts", import.meta.url);
  if ("Bun" in globalThis || "Deno" in globalThis) return new Worker(source, { workerData });
  const tsx = import.meta.resolve("tsx/esm/api");
  const start = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(source.href)}); })`;
  return new Worker(start, { eval: true, workerData });
}

export function startWebhookThread(options: WebhookThreadOptions): WebhookThread {
  const { warn, onDisabled, workerModule, ...settings } = options;
  // A plain copy of the environment: Deno's `process.env` cannot be cloned into a thread.
  const data: WebhookThreadData = { ...settings, env: { ...settings.env }, wakeFlag: new SharedArrayBuffer(4) };
  const woken = new Int32Array(data.wakeFlag);
  let stopping = false;
  /** True from the thread's ready message to its exit. */
  let running = false;
  /** True once the current thread has exited. */
  let exited = false;
  let current: Worker;
  let stopped: (() => void) | undefined;

  const launch = () =>
    new Promise<number | undefined>((ready, failed) => {
      const worker = newWorker(data, workerModule);
      current = worker;
      exited = false;
      worker.on("message", (message: ThreadMessage) => {
        if (message.type === "ready") {
          running = true;
          // A wake posted to a thread that died unread is not taken: this one looks at once anyway.
          Atomics.store(woken, 0, 0);
          ready(message.threadId);
        } else if (message.type === "warn") warn(message.message);
        else if (message.type === "disabled") onDisabled(message.webhookId, message.reason);
        else stopped?.();
      });
      worker.on("error", (error) => {
        if (running) warn(`webhook deliveries' thread failed (started again shortly): ${error.message}`);
        else failed(error);
      });
      worker.on("exit", () => {
        // A thread ended mid-transaction (terminated by stop) never released the write lock.
        releaseAbandonedSide(data.writeLock);
        const started = running;
        running = false;
        exited = true;
        stopped?.();
        if (!started) failed(new Error("the webhook deliveries' thread exited before it started"));
        else if (!stopping) setTimeout(restart, RESTART_AFTER_MS).unref();
      });
    });
  const restart = () => {
    if (!stopping) launch().catch((error: unknown) => warn(`webhook deliveries' thread did not start again: ${String(error)}`));
  };

  return {
    ready: launch(),
    wake() {
      if (Atomics.exchange(woken, 0, 1) === 0) current.postMessage("wake");
    },
    async stop() {
      stopping = true;
      if (exited) return;
      // A thread still starting takes the message once it runs; one that never gets there is ended.
      await new Promise<void>((resolve) => {
        stopped = resolve;
        setTimeout(resolve, STOP_WAIT_MS).unref();
        current.postMessage("stop");
      });
      await current.terminate();
    },
  };
}
