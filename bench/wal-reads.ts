/**
 * WAL read probe (issue 18, target 8's checkpoint limit): what a WAL full of frames not yet
 * checkpointed costs the reads. Not part of `npm run bench`.
 *
 *   node --import tsx bench/wal-reads.ts [--rounds=60] [--fill=12000] [--reads=40] [--cold=20] [--control | --copied]
 *
 * SQLite looks a page up in the WAL through the wal-index's hash tables, one per 4,096 frames,
 * newest to oldest, each time a page is not in the connection's own cache. A larger checkpoint
 * limit than SQLite's 1000 frames (file.ts keeps the default) would let a server taking creates
 * all day read through a WAL half that limit on average: this measures what that costs. Two copies (in a temporary directory)
 * of bench/http.ts's 100,000-row database, each read through the store's own path
 * (`createLibsqlStore`, file.ts's read connection): both get a table of `--fill` pages written
 * by a side connection that never checkpoints; then one ("short") is checkpointed and its WAL
 * truncated, and again whenever its WAL passes 1,000 frames (SQLite's default limit); the other
 * ("full") keeps those frames in its WAL, and the ticks below add to them. Each round the two take turns (the
 * order swapped every round) at list page 1 + total (popupId and status, as bench/http.ts) and
 * get by id, the same requests for both: `--reads` of each with the reader's page cache warm,
 * then `--cold` of each with a one-page commit by the side connection before each read, as a
 * server's creates between its reads do (a commit makes every reader drop its page cache, so
 * the next read looks each page up in the WAL again). CPU (`process.cpuUsage`) per read, the
 * side connection's commits not counted. `--control`: both copies kept short, to see the probe's
 * own spread. `--copied`: the full copy's frames are checkpointed as checkpoints run beside
 * commits that never stop leave them (bench/README.md, store.ts section): copied into the file
 * whenever 1,000 are not, but kept in the WAL, which does not start over. A read transaction
 * held on a connection of its own at the newest frame keeps it from starting over (the short
 * copy holds one too), so only the frames already copied differ between the two.
 */
import Database from "libsql";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getSubmissionAsJson, listSubmissionsAsJson } from "../src/store.ts";
import type { CompleteStore } from "../src/store.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import { POPUPS, STATUSES } from "./support/dataset.ts";
import { DATA_DIR } from "./support/http-setup.ts";
import { percentile } from "./support/timing.ts";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const ROUNDS = Number(arg("rounds") ?? 60);
const FILL = Number(arg("fill") ?? 12_000);
const READS = Number(arg("reads") ?? 40);
const COLD = Number(arg("cold") ?? 20);
/** Both copies kept short: the probe's own noise (the two ought to measure alike). */
const CONTROL = process.argv.includes("--control");
const COPIED = process.argv.includes("--copied");

const source = `${DATA_DIR}http-100000.db`;
if (!existsSync(source) || !existsSync(`${source}.ids`)) throw new Error(`${source} is missing: run bench/http.ts once to make it`);
const ids = readFileSync(`${source}.ids`, "utf8").split("\n");
const lists = POPUPS.flatMap((popupId) => STATUSES.map((status) => ({ popupId, status })));

const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

interface State {
  name: "full" | "short";
  path: string;
  store: CompleteStore;
  side: Database.Database;
  tick: Database.Statement;
  accountId: string;
  /** A read transaction on a connection of its own (`--copied`), which keeps the WAL from starting over. */
  holder?: { db: Database.Database; read: Database.Statement };
  /** The WAL's frames at its last `copyKeeping`. */
  copiedUpTo: number;
  /** Microseconds and reads, by kind ("list warm", "get cold", ...), per round. */
  rounds: Map<string, number[]>;
}

/** `FILL` pages of a table of their own, one row a page, all in the WAL after this commit (the table's earlier pages freed, then used again). */
const fill = (side: Database.Database) => {
  side.exec("DELETE FROM wal_fill");
  side.prepare("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) INSERT INTO wal_fill SELECT zeroblob(3900) FROM c").run(FILL);
};

/** `--copied`: every frame copied into the file, the WAL kept as long as it is (see the top). */
const hold = (state: State) => {
  state.holder!.db.exec("BEGIN");
  state.holder!.read.get();
};
const copyKeeping = (state: State) => {
  state.holder!.db.exec("COMMIT");
  hold(state);
  const [busy, log, checkpointed] = state.side.prepare("PRAGMA wal_checkpoint(PASSIVE)").raw(true).get() as number[];
  if (busy !== 0 || log !== checkpointed) throw new Error(`checkpoint left ${log! - checkpointed!} frames`);
  state.copiedUpTo = log!;
};

const walFrames = (path: string) => {
  const size = existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0;
  return size <= 32 ? 0 : Math.floor((size - 32) / (4096 + 24));
};

const dir = mkdtempSync(join(tmpdir(), "formsink-wal-reads-"));
const states: State[] = [];
try {
  for (const name of ["full", "short"] as const) {
    const path = join(dir, `${name}.db`);
    copyFileSync(source, path);
    // Opened first by the store, so a migration runs through it, as a server's start does.
    const store = await createLibsqlStore({ url: `file:${path}` });
    const side = new Database(path);
    side.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0; PRAGMA wal_checkpoint(TRUNCATE)");
    const pageSize = (side.prepare("PRAGMA page_size").raw(true).get() as [number])[0];
    if (pageSize !== 4096) throw new Error(`page size ${pageSize}: walFrames assumes 4096`);
    side.exec("CREATE TABLE wal_fill (b BLOB); CREATE TABLE wal_tick (n INTEGER); INSERT INTO wal_tick VALUES (0)");
    fill(side);
    if (name === "short" || CONTROL) side.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const accountId = (side.prepare("SELECT account_id FROM submissions LIMIT 1").raw(true).get() as [string])[0];
    const state: State = { name, path, store, side, tick: side.prepare("UPDATE wal_tick SET n = n + 1"), accountId, rounds: new Map(), copiedUpTo: 0 };
    if (COPIED) {
      const db = new Database(path);
      state.holder = { db, read: db.prepare("SELECT count(*) FROM wal_tick") };
      hold(state);
      if (name === "full") copyKeeping(state);
    }
    states.push(state);
  }
  console.log(`Node ${process.version}; two copies of ${source}; WAL frames at start: ${states.map((s) => `${s.name} ${walFrames(s.path)}`).join(", ")}`);
  console.log(`${ROUNDS} rounds; each: ${READS} warm and ${COLD} cold (a one-page commit before each) of list and of get, per state\n`);

  const record = (state: State, kind: string, micros: number) => {
    const list = state.rounds.get(kind) ?? [];
    list.push(micros);
    state.rounds.set(kind, list);
  };
  const list = (state: State, i: number) => listSubmissionsAsJson(state.store, state.accountId, { ...lists[i % lists.length]!, order: "desc", limit: 10, offset: 0 });
  const get = async (state: State, i: number) => {
    if ((await getSubmissionAsJson(state.store, state.accountId, ids[i]!)) === undefined) throw new Error(`no submission ${ids[i]}`);
  };

  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? states : [...states].reverse();
    const firstId = (round * 7919 * (READS + COLD)) % ids.length;
    const idAt = (k: number) => (firstId + k * 7919) % ids.length; // a prime stride, in no index order
    for (const state of order) {
      for (const [kind, read] of [["list", (k: number) => list(state, round + k)], ["get", (k: number) => get(state, idAt(k))]] as const) {
        let started = cpu();
        for (let k = 0; k < READS; k++) await read(k);
        record(state, `${kind} warm`, (cpu() - started) / READS);
        let spent = 0;
        for (let k = 0; k < COLD; k++) {
          state.tick.run();
          started = cpu();
          await read(READS + k);
          spent += cpu() - started;
        }
        record(state, `${kind} cold`, spent / COLD);
      }
    }
    // As SQLite's default limit would: the short WAL stays under 1,000 frames. The full one is
    // checkpointed and filled again once the ticks have added 3,000 frames to it.
    const [full, short] = states as [State, State];
    const truncate = (state: State) => {
      if (COPIED) state.holder!.db.exec("COMMIT");
      state.side.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      if (COPIED) hold(state);
    };
    if (walFrames(short.path) > 1000) truncate(short);
    if (walFrames(full.path) > (CONTROL ? 1000 : FILL + 3000)) {
      truncate(full);
      if (!CONTROL) {
        fill(full.side);
        if (COPIED) copyKeeping(full);
      }
    } else if (COPIED && walFrames(full.path) - full.copiedUpTo > 1000) copyKeeping(full);
  }

  const [full, short] = states as [State, State];
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  console.log("CPU us/read, median of rounds; full/short: median of the rounds' ratios [25th-75th percentile], mean +- standard error");
  console.log("kind        full    short   full/short");
  for (const kind of ["list warm", "list cold", "get warm", "get cold"]) {
    const f = full.rounds.get(kind)!;
    const s = short.rounds.get(kind)!;
    const ratios = f.map((x, i) => x / s[i]!);
    const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
    const se = Math.sqrt(ratios.reduce((a, b) => a + (b - mean) ** 2, 0) / (ratios.length - 1) / ratios.length);
    const pct = (r: number) => `${r >= 1 ? "+" : ""}${((r - 1) * 100).toFixed(1)}%`;
    console.log(
      `${kind.padEnd(10)} ${median(f).toFixed(1).padStart(6)} ${median(s).toFixed(1).padStart(7)}   ${pct(median(ratios))} [${pct(percentile(ratios, 25))} ${pct(percentile(ratios, 75))}], ${pct(mean)} +- ${(se * 100).toFixed(1)}%`,
    );
  }
  console.log(`\nWAL frames at end: ${states.map((s) => `${s.name} ${walFrames(s.path)}`).join(", ")}`);
} finally {
  for (const state of states) {
    state.holder?.db.close();
    state.side.close();
    await state.store.close();
  }
  rmSync(dir, { recursive: true, force: true });
}
