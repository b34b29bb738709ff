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
 * The binding tells no WAL size, so the frames a commit adds are estimated from what each
 * checkpoint reports (the frames in the WAL, and how many of them it copied), and a checkpoint
 * starts once the commits since the last one are estimated at `CHECKPOINT_FRAMES`. An estimate
 * that is off errs towards checkpointing sooner (see `finished`).
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
 * The frames a checkpoint waits for: SQLite's own automatic limit. A read looks up pages in the
 * frames not yet copied, and a WAL of thousands of them made lists and gets dearer
 * (bench/README.md, store.ts section).
 */
const CHECKPOINT_FRAMES = 1000;
/** The WAL's length at which the next write waits to start it over (see above). */
const RESTART_FRAMES = 8 * CHECKPOINT_FRAMES;

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
  // No busy handler: a passive checkpoint waits for nothing; one that meets another process's
  // checkpoint is reported busy and runs again after later commits.
  const db = new AsyncDatabase(path, { timeout: 0 });
  let statement: Promise<{ all(): Promise<unknown[]> }> | undefined;
  const checkpoint = async (): Promise<CheckpointResult> => {
    // FULL: the database file is synced before frames are marked copied (see above).
    const prepared = (statement ??= db.exec("PRAGMA synchronous = FULL").then(() => db.prepare("PRAGMA wal_checkpoint(PASSIVE)")));
    prepared.catch(() => (statement = undefined));
    return ((await (await prepared).all()) as CheckpointResult[])[0]!;
  };

  // Commits and rows changed since the last checkpoint started, and the WAL frames each came
  // to at the last checkpoint (none measured yet: the first commit is checkpointed).
  let commits = 0;
  let rows = 0;
  let framesPerCommit = Number.POSITIVE_INFINITY;
  let framesPerRow = Number.POSITIVE_INFINITY;
  let lastLog = 0;
  // Whether the WAL may have started over since the last checkpoint: only if that one copied
  // every frame and nothing was committed while it ran.
  let mayHaveStartedOver = true;
  let restartWanted = false;
  let running: Promise<void> | undefined;

  // Either measure alone misjudges a change of work: a migration's few small commits, then an
  // import's large ones (per commit), or an import's thousands of rows a commit, then creates
  // (per row). Due when either says so, the WAL overshoots only where both fall short.
  const due = () => commits > 0 && (commits * framesPerCommit >= CHECKPOINT_FRAMES || rows * framesPerRow >= CHECKPOINT_FRAMES);
  const finished = (result: CheckpointResult, covered: { commits: number; rows: number }) => {
    // The frames the covered commits added: what the WAL grew by, unless it may have started
    // over, when the whole WAL is counted (too many, if it did not: the next checkpoint then
    // comes sooner, never later).
    const added = mayHaveStartedOver || result.log < lastLog ? result.log : result.log - lastLog;
    if (covered.commits > 0 && added > 0) {
      framesPerCommit = added / covered.commits;
      framesPerRow = added / covered.rows;
    }
    lastLog = result.log;
    const complete = result.busy === 0 && result.checkpointed === result.log;
    mayHaveStartedOver = complete && commits === 0;
    // When a reader holds frames back, a write waiting would not help.
    if (complete && result.log >= RESTART_FRAMES) restartWanted = true;
  };
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
    finished(result, covered);
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
      // A commit that changed no row (a schema change) still wrote pages.
      rows += Math.max(rowsChanged, 1);
      if (running === undefined && due()) void start();
    },
    async close() {
      await settled();
      db.close();
    },
  };
}
