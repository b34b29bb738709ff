/**
 * Group commit: write batches that arrive while the event loop is busy share one transaction,
 * so concurrent creates pay for one commit (one fsync of the WAL on a file, one round trip to a
 * remote database) instead of one each. Each caller's promise settles only after the shared
 * commit: an acknowledged write is as durable as one committed alone.
 *
 * The shared transaction runs the batches one after another, exactly as if each had committed
 * alone in that order. When it fails (one batch breaks a constraint), every batch of the group
 * runs again on its own, so that only the batch at fault fails; a storage fault fails them all.
 *
 * A group of several batches may also share work that each would otherwise do alone
 * (`GroupCommitOptions.around`): statements run first and last in its transaction, which may
 * take over some of each marked batch's own statements. A batch run again on its own runs all
 * of its own statements and none of the group's, as any batch alone does.
 */
import { StoreUnavailable } from "../../store.ts";
import type { SqlDriver, SqlResult, SqlStatement } from "./driver.ts";
import { HAS_SET_IMMEDIATE, nextTurn } from "../../next-turn.ts";

/** Most batches per shared transaction: bounds one transaction's size and a batch's wait. */
const MAX_GROUP = 64;

/**
 * Longest a group waits, once a commit is done, for the writers that commit answered to send
 * their next batch. A commit costs about the same for one batch as for many (the sync, the
 * pages that every create changes), so under steady load a group that waits the moment it
 * takes a client to answer and send again holds every concurrent writer instead of half of
 * them: bench/http.ts's create (10 connections) needs this. A writer that does not come back
 * costs the others at most this wait, and only until the commit after it.
 */
const MAX_GATHER_MS = 1;

/**
 * Whether a group may wait for writers at all. A Worker (which has no `setImmediate`) runs each
 * request in a context of its own whose timers end with its answer, so a wait started while
 * answering one request could leave another's write waiting forever: there, a group is what
 * one turn of the event loop gathers.
 */
const MAY_GATHER = HAS_SET_IMMEDIATE;

/** Statements that run first and last in the transaction of a group. */
export interface GroupWork<Mark = never> {
  first: readonly SqlStatement[];
  last: readonly SqlStatement[];
  /**
   * The statements of a batch given `mark` that run in the group, when `first` and `last` do
   * the rest of its work; all of them when not given. A batch's answer is its results of these.
   */
  inGroup?: (statements: readonly SqlStatement[], mark: Mark) => readonly SqlStatement[];
}

export interface GroupCommitOptions<Mark> {
  /**
   * The statements to run around a group of several batches, from the marks of those given one
   * (in the group's order); undefined for none.
   */
  around?: (marks: readonly Mark[]) => GroupWork<Mark> | undefined;
}

/** Queues a batch for the next group commit, with a mark for `GroupCommitOptions.around`. */
export type GroupedWrite<Mark = never> = (statements: readonly SqlStatement[], mark?: Mark) => Promise<SqlResult[]>;

interface PendingWrite<Mark> {
  statements: readonly SqlStatement[];
  mark: Mark | undefined;
  resolve: (results: SqlResult[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Queues a batch until the current turn of the event loop is over (every request that is ready
 * has had its turn) and no commit is in flight, then commits the queue in one transaction. A
 * driver whose commit does not hold the event loop (the libSQL file's, whose fsync runs in the
 * binding's thread) so gathers every write that arrives during one commit into the next, and
 * after a commit the next group waits a little for the writers it answered (MAX_GATHER_MS).
 */
export function groupCommit<Mark = never>(driver: SqlDriver, options: GroupCommitOptions<Mark> = {}): GroupedWrite<Mark> {
  const queue: PendingWrite<Mark>[] = [];
  let scheduled = false;
  let committing = false;
  // Batches the next group waits for: those queued when the last commit was done, and one from
  // each writer it answered. Zero after a wait of MAX_GATHER_MS.
  let expected = 0;
  let gathering: ReturnType<typeof setTimeout> | undefined;

  const flush = async () => {
    scheduled = false;
    if (committing) return; // the commit in flight schedules the next when it is done
    if (MAY_GATHER && queue.length < expected) {
      gathering ??= setTimeout(() => {
        gathering = undefined;
        expected = 0;
        schedule();
      }, MAX_GATHER_MS);
      return;
    }
    if (gathering !== undefined) clearTimeout(gathering);
    gathering = undefined;
    committing = true;
    const group = queue.splice(0, MAX_GROUP);
    try {
      await commit(group);
    } finally {
      committing = false;
      expected = Math.min(MAX_GROUP, queue.length + group.length);
      if (queue.length > 0) schedule();
    }
  };
  const commit = async (group: PendingWrite<Mark>[]) => {
    if (group.length === 1) {
      const [only] = group;
      await driver.batch(only!.statements, "write").then(only!.resolve, only!.reject);
      return;
    }
    const around = aroundGroup(group, options.around);
    const { inGroup } = around;
    const own = group.map((write) => (inGroup === undefined || write.mark === undefined ? write.statements : inGroup(write.statements, write.mark)));
    const statements = [...around.first];
    for (const batch of own) for (const statement of batch) statements.push(statement);
    for (const statement of around.last) statements.push(statement);
    let results: SqlResult[];
    try {
      results = await driver.batch(statements, "write");
    } catch (error) {
      // A storage fault (a lock held too long, a full disk) is no one batch's fault: each alone
      // would meet it again, one wait after another.
      if (error instanceof StoreUnavailable) {
        for (const write of group) write.reject(error);
        return;
      }
      for (const write of group) await driver.batch(write.statements, "write").then(write.resolve, write.reject);
      return;
    }
    let at = around.first.length;
    group.forEach((write, i) => {
      const ran = own[i]!.length;
      write.resolve(results.slice(at, at + ran));
      at += ran;
    });
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    nextTurn(() => void flush());
  };

  return (statements, mark) =>
    new Promise<SqlResult[]>((resolve, reject) => {
      queue.push({ statements, mark, resolve, reject });
      schedule();
    });
}

const NOTHING_AROUND = { first: [], last: [] } as const;

/** The statements around `group`'s own, from its batches' marks. */
function aroundGroup<Mark>(group: readonly PendingWrite<Mark>[], around: GroupCommitOptions<Mark>["around"]): GroupWork<Mark> {
  if (around === undefined) return NOTHING_AROUND;
  const marks: Mark[] = [];
  for (const write of group) if (write.mark !== undefined) marks.push(write.mark);
  return around(marks) ?? NOTHING_AROUND;
}
