/**
 * Checkpoints of a file's WAL, run from a connection of their own, off the commits' path.
 *
 * With SQLite's automatic checkpoint, the commit that takes the WAL past its limit also copies
 * the WAL into the database file and syncs it, and every write queued behind that commit waits.
 * Here the write connection's automatic checkpoint is off, and a PASSIVE checkpoint runs on
 * another connection in the binding's threads (`libsql/promise`): it copies what readers no
 * longer need while the writer goes on appending to the WAL, and never blocks the writer, the
 * readers or the event loop.
 *
 * The binding tells neither the WAL's size nor the pages a commit writes, so commits and the
 * rows they change stand in for them (`due`).
 *
 * SQLite starts the WAL over from its beginning only at a write that begins with every frame
 * copied. Under back-to-back writes a checkpoint running beside them never leaves such a
 * moment, so once a checkpoint reports the WAL at `RESTART_FRAMES`, the next write first waits
 * for the checkpoint in flight and one more over what was committed meanwhile: that write then
 * starts the WAL over. A reader that keeps an old snapshot open stops every checkpoint at that
 * snapshot, this one as SQLite's own, and the WAL grows until the reader is done; the write
 * does not wait for that.
 *
 * Durability does not depend on any of this: a commit is synced in the WAL before it returns,
 * a checkpoint syncs the database file before it marks frames copied, and the WAL is started
 * over only once every frame is copied, so a crash at any point leaves every commit in the file
 * or in the WAL, from which the next opening recovers it.
 */
import AsyncDatabase from "libsql/promise";

/**
 * When a checkpoint is due: after this many commits, or commits that changed this many rows,
 * whichever comes first. A group commit of creates writes some tens of WAL pages and an
 * import's batch thousands, so creates are copied about every thousand pages (SQLite's own
 * limit) and every large write at once. A read looks up pages among the frames not yet copied,
 * and thousands of them made lists and gets dearer (bench/README.md, store.ts section).
 */
const CHECKPOINT_COMMITS = 14;
const CHECKPOINT_ROWS = 1000;
/** The WAL's length in pages at which the next write waits to start it over (see above). */
const RESTART_FRAMES = 8000;

/** What `PRAGMA wal_checkpoint` answers: frames in the WAL, and how many of them are copied. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export interface WalCheckpoints {
  /** Awaited by the writer before each write transaction: at once unless the WAL is to start over. */
  beforeWrite(): Promise<void> | undefined;
  /**
   * The same for a writer that cannot wait (a synchronous connection): when the WAL is to start
   * over and no checkpoint is in flight, `checkpointHere` copies the rest on the writer's own
   * connection; with one in flight, a later write does.
   */
  beforeWriteSync(checkpointHere: () => CheckpointResult): void;
  /** Told after each commit of the writer, with the rows its statements changed. */
  committed(rowsChanged: number): void;
  /** Waits for the checkpoint in flight, then closes the connection. */
  close(): Promise<void>;
}

export function walCheckpoints(path: string): WalCheckpoints {
  // Opened at the first checkpoint (a command that only reads never needs it). No busy handler:
  // a passive checkpoint waits for nothing; one that meets another process's checkpoint is
  // reported busy and runs again after later commits.
  let db: AsyncDatabase | undefined;
  let statement: Promise<{ all(): Promise<unknown[]> }> | undefined;
  const checkpoint = async (): Promise<CheckpointResult> => {
    const connection = (db ??= new AsyncDatabase(path, { timeout: 0 }));
    // FULL: the database file is synced before frames are marked copied (see above).
    const prepared = (statement ??= connection.exec("PRAGMA synchronous = FULL").then(() => connection.prepare("PRAGMA wal_checkpoint(PASSIVE)")));
    prepared.catch(() => (statement = undefined));
    return ((await (await prepared).all()) as CheckpointResult[])[0]!;
  };

  // Commits and rows changed since the last checkpoint started.
  let commits = 0;
  let rows = 0;
  let restartWanted = false;
  let running: Promise<void> | undefined;

  const due = () => commits >= CHECKPOINT_COMMITS || rows >= CHECKPOINT_ROWS;
  // Commits and rows since the last checkpoint, handed to the one starting now.
  const take = () => {
    const covered = { commits, rows };
    commits = 0;
    rows = 0;
    return covered;
  };
  /**
   * Whether a checkpoint ran. One that failed, or found another process checkpointing (a WAL
   * length of -1), loses nothing (the frames stay in the WAL): its commits count towards the
   * next, which the next commit starts.
   */
  const ran = (result: CheckpointResult | undefined, covered: { commits: number; rows: number }) => {
    if (result === undefined || result.log < 0) {
      commits += covered.commits;
      rows += covered.rows;
      return false;
    }
    // Copied to the end, yet long: commits racing the checkpoints keep it from starting over.
    // When a reader holds frames back instead, a write waiting would not help.
    if (result.busy === 0 && result.checkpointed === result.log && result.log >= RESTART_FRAMES) restartWanted = true;
    return true;
  };
  const start = (): Promise<void> => {
    const covered = take();
    running = checkpoint()
      .then(
        (result) => ran(result, covered),
        () => ran(undefined, covered),
      )
      .then((again) => {
        running = undefined;
        if (again && due()) void start();
      });
    return running;
  };
  const settled = async () => {
    while (running !== undefined) await running;
  };

  return {
    beforeWrite() {
      if (!restartWanted) return undefined;
      restartWanted = false;
      return (async () => {
        await settled();
        // The writer waits here, so nothing commits while this one copies the rest.
        if (commits > 0) await start();
      })();
    },
    beforeWriteSync(checkpointHere) {
      if (!restartWanted || running !== undefined) return;
      restartWanted = false;
      const covered = take();
      let result: CheckpointResult | undefined;
      try {
        result = checkpointHere();
      } catch {
        // The write goes on: a checkpoint is never a reason to refuse one.
      }
      ran(result, covered);
    },
    committed(rowsChanged) {
      commits++;
      rows += rowsChanged;
      if (running === undefined && due()) void start();
    },
    async close() {
      await settled();
      db?.close();
    },
  };
}
