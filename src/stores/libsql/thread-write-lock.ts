/**
 * A write lock shared by the two threads of one process that each have a connection to one
 * libSQL file (`formsink serve` and its webhook thread). SQLite lets one connection write at a
 * time and makes the others wait by sleeping and trying again; two busy connections then starve
 * each other, and a wait in the binding's own threads holds up the commits queued behind it
 * there. Taking this lock first makes them take turns instead (Peterson's lock on shared
 * memory): each waits one transaction of the other's at most. A side asks for it again only
 * after its last release (each connection's writes run one at a time).
 *
 * Each side's claim is its own flag, so a thread that ended while it held or waited for the
 * lock (a worker terminated mid-transaction) is cleared by the side that lives on
 * (`releaseAbandonedSide`), and that side's writes go on.
 */

export interface ThreadWriteLock {
  /** The shared memory to hand to the other thread (`threadWriteLock(buffer)` there). */
  readonly buffer: SharedArrayBuffer;
  /** Waits without blocking the thread's event loop. */
  acquire(): Promise<void>;
  /** Waits by blocking the thread: for a thread that has nothing else to do meanwhile. */
  acquireBlocking(): void;
  release(): void;
}

// Int32 0 and 1 are the sides' own: 1 while that side holds or waits for the lock.
/** The side that lets the other go first when both want the lock. */
const YIELDING = 2;
/** Counts every change of the above: what a waiting side sleeps on. */
const CHANGES = 3;
/** The side of the thread given the buffer, which `releaseAbandonedSide` clears. */
const GIVEN_SIDE = 1;

/**
 * The lock on `buffer`: without it, a new lock whose buffer goes to the other thread; with it,
 * that other thread's side of the lock.
 */
export function threadWriteLock(buffer?: SharedArrayBuffer): ThreadWriteLock {
  const shared = buffer ?? new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT);
  const state = new Int32Array(shared);
  const me = buffer === undefined ? 0 : GIVEN_SIDE;
  const other = 1 - me;
  const enter = () => {
    Atomics.store(state, me, 1);
    Atomics.store(state, YIELDING, me);
    changed(state);
  };
  const mustWait = () => Atomics.load(state, other) === 1 && Atomics.load(state, YIELDING) === me;
  return {
    buffer: shared,
    async acquire() {
      enter();
      for (let seen = Atomics.load(state, CHANGES); mustWait(); seen = Atomics.load(state, CHANGES)) {
        const wait = Atomics.waitAsync(state, CHANGES, seen);
        if (wait.async) await wait.value;
      }
    },
    acquireBlocking() {
      enter();
      for (let seen = Atomics.load(state, CHANGES); mustWait(); seen = Atomics.load(state, CHANGES)) Atomics.wait(state, CHANGES, seen);
    },
    release() {
      Atomics.store(state, me, 0);
      changed(state);
    },
  };
}

/**
 * Clears the claim of the thread that was given `buffer`, for after that thread ended: a
 * terminated thread never releases, and the lock it held or waited for would stop every write
 * of this one's for good.
 */
export function releaseAbandonedSide(buffer: SharedArrayBuffer): void {
  const state = new Int32Array(buffer);
  Atomics.store(state, GIVEN_SIDE, 0);
  changed(state);
}

function changed(state: Int32Array): void {
  Atomics.add(state, CHANGES, 1);
  Atomics.notify(state, CHANGES);
}
