/**
 * The write lock serve's request thread and its webhook thread share: while one thread holds
 * it, the other's write waits (without SQLite's sleep-and-retry), and each gets it in turn.
 */
import { Worker } from "node:worker_threads";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { threadWriteLock } from "../../src/stores/libsql/thread-write-lock.ts";

const test = suite("thread write lock");

/** A worker thread that takes the lock on `buffer` (blocking, as serve's webhook thread does) on each "take", and says when it holds it. */
function lockingThread(buffer: SharedArrayBuffer): Worker {
  const lock = new URL("../../src/stores/libsql/thread-write-lock.ts", import.meta.url).href;
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then(({ register }) => { register(); return import(${JSON.stringify(lock)}); }).then(({ threadWriteLock }) => {
      const lock = threadWriteLock(workerData);
      parentPort.on("message", (message) => {
        if (message === "take") { lock.acquireBlocking(); parentPort.postMessage("holding"); }
        else { lock.release(); parentPort.postMessage("released"); }
      });
      parentPort.postMessage("ready");
    });`;
  return new Worker(source, { eval: true, workerData: buffer });
}

const next = (worker: Worker) => new Promise<string>((resolve) => worker.once("message", resolve));

test("a thread's write waits while another thread holds the lock, and gets it once that one lets go", async () => {
  const lock = threadWriteLock();
  const worker = lockingThread(lock.buffer);
  try {
    assert.is(await next(worker), "ready");
    await lock.acquire();
    const held = next(worker);
    worker.postMessage("take");
    let taken = false;
    void held.then(() => (taken = true));
    // Long enough for the other thread to take a free lock many times over.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.is(taken, false, "the other thread took the lock this thread holds");
    lock.release();
    assert.is(await held, "holding");

    // Now this thread waits, without blocking its event loop, until the other lets go.
    let acquired = false;
    const acquiring = lock.acquire().then(() => (acquired = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.is(acquired, false, "this thread took the lock the other thread holds");
    worker.postMessage("release");
    assert.is(await next(worker), "released");
    await acquiring;
    lock.release();
  } finally {
    await worker.terminate();
  }
});

test.run();
