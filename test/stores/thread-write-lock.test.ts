/**
 * The write lock serve's request thread and its webhook thread share: while one thread holds
 * it, the other's write waits (without SQLite's sleep-and-retry), and each gets it in turn.
 */
import { Worker } from "node:worker_threads";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { releaseAbandonedSide, threadWriteLock } from "../../src/stores/libsql/thread-write-lock.ts";

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

/** `acquiring`, or a failure naming `what` if it is still waiting after far longer than a free lock takes. */
async function acquiredOrFail(acquiring: Promise<void>, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still waiting for the lock after 5 s`)), 5000)));
  try {
    await Promise.race([acquiring, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

test("a thread ended while it holds the lock, or while it waits for it, is released as abandoned: the other thread's writes go on", async () => {
  const lock = threadWriteLock();
  const holder = lockingThread(lock.buffer);
  assert.is(await next(holder), "ready");
  holder.postMessage("take");
  assert.is(await next(holder), "holding");
  await holder.terminate();
  releaseAbandonedSide(lock.buffer);
  await acquiredOrFail(lock.acquire(), "after the holding thread was terminated");

  const waiter = lockingThread(lock.buffer);
  assert.is(await next(waiter), "ready");
  const waiting = next(waiter);
  waiter.postMessage("take");
  // The thread is blocked in its wait for the lock this thread holds when it is ended.
  await new Promise((resolve) => setTimeout(resolve, 200));
  await waiter.terminate();
  releaseAbandonedSide(lock.buffer);
  let taken = false;
  void waiting.then(() => (taken = true));
  assert.is(taken, false, "the terminated thread never held the lock");
  lock.release();
  await acquiredOrFail(lock.acquire(), "after the waiting thread was terminated");
  lock.release();
});

test.run();
