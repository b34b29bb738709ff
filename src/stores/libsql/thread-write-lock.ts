/**
 * A write lock shared by the threads of one process that each have a connection to one libSQL
 * file (`formsink serve` and its webhook thread). SQLite lets one connection write at a time and
 * makes the others wait by sleeping and trying again; two busy connections then starve each
 * other, and a wait in the binding's own threads holds up the commits queued behind it there.
 * Taking this lock first makes them queue instead, in the order they asked (a ticket lock on
 * shared memory): each waits one transaction of the other's at most.
 */

export interface ThreadWriteLock {
  /** The shared memory to hand to another thread (`threadWriteLock(buffer)` there). */
  readonly buffer: SharedArrayBuffer;
  /** Waits without blocking the thread's event loop. */
  acquire(): Promise<void>;
  /** Waits by blocking the thread: for a thread that has nothing else to do meanwhile. */
  acquireBlocking(): void;
  release(): void;
}

const NEXT_TICKET = 0;
const SERVING = 1;

/** The lock on `buffer` (made here when not given). */
export function threadWriteLock(buffer = new SharedArrayBuffer(8)): ThreadWriteLock {
  const state = new Int32Array(buffer);
  return {
    buffer,
    async acquire() {
      const ticket = Atomics.add(state, NEXT_TICKET, 1);
      for (let serving = Atomics.load(state, SERVING); serving !== ticket; serving = Atomics.load(state, SERVING)) {
        const wait = Atomics.waitAsync(state, SERVING, serving);
        if (wait.async) await wait.value;
      }
    },
    acquireBlocking() {
      const ticket = Atomics.add(state, NEXT_TICKET, 1);
      for (let serving = Atomics.load(state, SERVING); serving !== ticket; serving = Atomics.load(state, SERVING)) {
        Atomics.wait(state, SERVING, serving);
      }
    },
    release() {
      Atomics.add(state, SERVING, 1);
      Atomics.notify(state, SERVING);
    },
  };
}
