/**
 * Import growth probe (issue 18, target 8): what a bulk-imported row costs as the libSQL file
 * grows toward bench/store.ts's 1,000,000 rows. Not part of `npm run bench`.
 *
 *   node --import tsx bench/import-growth.ts [--rows=1000000] [--block=100000] [--variants=current,cache256]
 *     [--base=<worktree of main>] [--creates=40] [--settle=150]
 *
 * Each variant is a fresh file in /tmp made by the real migrations; the same rows
 * (bench/support/dataset.ts, batches of 5,000 as store.ts imports them) go into every file, the
 * variants taking turns batch by batch so that the machine's drift falls on each alike. The
 * import runs the store's own statements (`importStatements`) one by one on a synchronous
 * connection set up as the store's writer (file.ts), each in one transaction synced at commit,
 * so each statement's CPU (`process.cpuUsage`) is seen; the WAL's checkpoint, which SQLite runs
 * inside COMMIT, is run just after it and timed apart. Per block of rows it prints the CPU per
 * row by statement, the bytes read and written per row (/proc/self/io's rchar and wchar:
 * pages read from the operating system, WAL and checkpoint writes) and the WAL's size.
 * The variants `store` and `base` import through `importSubmissions` instead, this tree's
 * store against the one in the worktree at `--base=`, so a change to the store is measured on
 * its own path. Each of their turns ends with `--settle` milliseconds of waiting, timed with the
 * turn: a store that checkpoints in the binding's threads after its commit has returned is
 * charged for that checkpoint, not the next variant's turn.
 *
 * With `--creates=<rounds>`, the store variants then take turns at rounds of 1,000 creates in
 * groups of 10 (as a group commit gathers them) on the files just loaded: CPU per create, and
 * the wall time of a group (its commit may run a checkpoint), and apart the groups during
 * which WAL frames were copied into the file (read from the WAL index).
 */
import Database from "libsql";
import { closeSync, openSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { openLibsqlFile } from "../src/stores/libsql/file.ts";
import type { SqlValue } from "../src/stores/sql/driver.ts";
import { importStatements } from "../src/stores/sql/import.ts";
import { createSqlStore } from "../src/stores/sql/store.ts";
import type { CompleteStore } from "../src/store.ts";
import { generateSubmissions } from "./support/dataset.ts";
import { percentile } from "./support/timing.ts";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const ROWS = Number(arg("rows") ?? 1_000_000);
const BLOCK = Number(arg("block") ?? 100_000);
const BATCH = 5000; // bench/store.ts's import batch
const SETTLE_MS = Number(arg("settle") ?? 150);
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
const ACCOUNT = "3f1c9a52-7d4e-4b8a-9c21-0e6f5a7b8c9d";

/** What a variant changes on the import's connection. */
const VARIANTS: Record<string, { pragmas: string; autocheckpoint?: number; store?: string }> = {
  // The store's own path, `importSubmissions` on `createLibsqlStore` (its writer on the binding's
  // threads, file.ts's settings), timed as one; `base` is the same from the tree at `--base=`.
  store: { pragmas: "", store: "../src/stores/libsql/index.ts" },
  base: { pragmas: "", store: `${arg("base")}/src/stores/libsql/index.ts` },
  // The SQL store on file.ts's one synchronous connection (as `formsink serve`'s webhook thread has).
  storesync: { pragmas: "", store: "sync" },
  current: { pragmas: "PRAGMA cache_size = -32768" },
  cache256: { pragmas: "PRAGMA cache_size = -262144" },
  // SQLite checkpoints inside COMMIT once the WAL holds this many pages (timed with COMMIT).
  wal8k: { pragmas: "PRAGMA cache_size = -32768", autocheckpoint: 8192 },
  wal16k: { pragmas: "PRAGMA cache_size = -32768", autocheckpoint: 16384 },
  wal32k: { pragmas: "PRAGMA cache_size = -32768", autocheckpoint: 32768 },
};
const names = (arg("variants") ?? "current,cache256").split(",");

const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const io = () => {
  const text = readFileSync("/proc/self/io", "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, "m").exec(text)![1]);
  return { read: field("rchar"), written: field("wchar") };
};
/** The WAL's frames and how many of them are copied into the file, from its index's header (https://sqlite.org/walformat.html). */
const walIndex = (file: string) => {
  const header = Buffer.alloc(136);
  const fd = openSync(`${file}-shm`, "r");
  readSync(fd, header, 0, header.length, 0);
  closeSync(fd);
  return { frames: header.readUInt32LE(16), copied: header.readUInt32LE(96) };
};
const label = (sql: string) => sql.replace(/\s+/g, " ").slice(0, 60);
const rss = () => process.memoryUsage().rss / 1e6;

interface Variant {
  name: string;
  file: string;
  store?: CompleteStore;
  db?: Database.Database;
  autocheckpoint?: number;
  prepared?: Map<string, Database.Statement>;
  parts: Map<string, number>;
  bytes: { read: number; written: number };
}
const files: Variant[] = [];
for (const name of names) {
  const file = `/tmp/import-growth-${process.pid}-${name}.db`;
  for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
  const module = VARIANTS[name]!.store;
  if (module !== undefined) {
    const opened = async () => {
      if (module !== "sync") return ((await import(module)) as typeof import("../src/stores/libsql/index.ts")).createLibsqlStore({ url: `file:${file}` });
      const connection = openLibsqlFile(file, { synchronous: true });
      return createSqlStore(connection.driver, connection.close);
    };
    const store = await opened();
    files.push({ name, file, store, parts: new Map<string, number>(), bytes: { read: 0, written: 0 } });
    continue;
  }
  const connection = openLibsqlFile(file, { synchronous: true });
  await (await createSqlStore(connection.driver, connection.close)).close();
  const db = new Database(file);
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON; ${VARIANTS[name]!.pragmas}; PRAGMA wal_autocheckpoint = ${VARIANTS[name]!.autocheckpoint ?? 0}`);
  files.push({ name, autocheckpoint: VARIANTS[name]!.autocheckpoint, file, db, prepared: new Map(), parts: new Map<string, number>(), bytes: { read: 0, written: 0 } });
}

/** CPU a row of each batch imported through a store, for the batch-by-batch comparison of two stores. */
const batchCpu = new Map<Variant, number[]>(files.filter((f) => f.store !== undefined).map((f) => [f, []]));
console.log(`import growth: ${ROWS.toLocaleString("en-US")} rows in batches of ${BATCH}, variants ${names.join(", ")} taking turns; Node ${process.version}`);
const rows = generateSubmissions(ROWS, 11);
for (let start = 0; start < ROWS; start += BATCH) {
  const batch = Array.from({ length: Math.min(BATCH, ROWS - start) }, () => rows.next().value!);
  for (let k = 0; k < files.length; k++) {
    const f = files[(k + start / BATCH) % files.length]!;
    const part = (what: string, since: number) => {
      const now = cpu();
      f.parts.set(what, (f.parts.get(what) ?? 0) + (now - since));
      return now;
    };
    const ioBefore = io();
    let t = cpu();
    if (f.store !== undefined) {
      const inserted = await f.store.importSubmissions(ACCOUNT, batch);
      if (inserted !== batch.length) throw new Error(`${f.name}: ${inserted} of ${batch.length} inserted`);
      await settle();
      batchCpu.get(f)?.push((cpu() - t) / batch.length);
      part("importSubmissions (the store's path)", t);
      const ioAfter = io();
      f.bytes.read += ioAfter.read - ioBefore.read;
      f.bytes.written += ioAfter.written - ioBefore.written;
      continue;
    }
    const { statements } = importStatements(ACCOUNT, batch, Date.now());
    t = part("statements built (JSON of the rows)", t);
    const db = f.db!;
    db.exec("BEGIN IMMEDIATE");
    for (const statement of statements) {
      let prepared = f.prepared!.get(statement.sql);
      if (prepared === undefined) f.prepared!.set(statement.sql, (prepared = db.prepare(statement.sql)));
      if (prepared.reader) prepared.all((statement.args ?? []) as SqlValue[]);
      else prepared.run((statement.args ?? []) as SqlValue[]);
      t = part(label(statement.sql), t);
    }
    db.exec("COMMIT");
    t = part("COMMIT (WAL written and synced)", t);
    // What wal_autocheckpoint = 1000 (SQLite's default) runs after such a commit.
    if (f.autocheckpoint === undefined) db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    part("checkpoint (PASSIVE, after the commit)", t);
    const ioAfter = io();
    f.bytes.read += ioAfter.read - ioBefore.read;
    f.bytes.written += ioAfter.written - ioBefore.written;
  }
  const done = start + BATCH;
  if (done % BLOCK === 0 || done >= ROWS) {
    const n = done % BLOCK === 0 ? BLOCK : done % BLOCK;
    console.log(`\nrows ${(done - n).toLocaleString("en-US")} to ${done.toLocaleString("en-US")}: us of CPU per row; RSS ${rss().toFixed(0)} MB`);
    console.log(`${"".padEnd(62)}${files.map((f) => f.name.padStart(10)).join("")}`);
    const labels = [...new Set(files.flatMap((f) => [...f.parts.keys()]))];
    for (const l of labels) console.log(`  ${l.padEnd(60)}${files.map((f) => ((f.parts.get(l) ?? 0) / n).toFixed(2).padStart(10)).join("")}`);
    console.log(`  ${"total".padEnd(60)}${files.map((f) => ([...f.parts.values()].reduce((a, b) => a + b, 0) / n).toFixed(2).padStart(10)).join("")}`);
    console.log(`  ${"bytes read per row".padEnd(60)}${files.map((f) => (f.bytes.read / n).toFixed(0).padStart(10)).join("")}`);
    console.log(`  ${"bytes written per row".padEnd(60)}${files.map((f) => (f.bytes.written / n).toFixed(0).padStart(10)).join("")}`);
    console.log(`  ${"WAL, MB".padEnd(60)}${files.map((f) => (statSync(f.file + "-wal").size / 1e6).toFixed(1).padStart(10)).join("")}`);
    for (const f of files) {
      f.parts.clear();
      f.bytes = { read: 0, written: 0 };
    }
  }
}
const importers = files.filter((f) => f.store !== undefined);
if (importers.length === 2) {
  const [a, b] = importers.map((f) => batchCpu.get(f)!) as [number[], number[]];
  const ratios = a.map((x, i) => x / b[i]!).sort((x, y) => x - y);
  console.log(`\nimports: ${importers[0]!.name}/${importers[1]!.name} CPU a row, median of the batches' ratios ${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)}; ${importers[0]!.name} lower in ${a.filter((x, i) => x < b[i]!).length} of ${a.length} batches`);
}
const createRounds = Number(arg("creates") ?? 0);
const creators = files.filter((f) => f.store !== undefined);
if (createRounds > 0) {
  const cpuPer = new Map<Variant, number[]>(creators.map((f) => [f, []]));
  const wall = new Map<Variant, number[]>(creators.map((f) => [f, []]));
  // Groups during which WAL frames were copied into the file (by a checkpoint in the commit, or
  // beside it), told apart by the WAL index (walIndex), and the rest.
  const copying = new Map<Variant, number[]>(creators.map((f) => [f, []]));
  const plain = new Map<Variant, number[]>(creators.map((f) => [f, []]));
  // New rows after the imported ones, the same for every file.
  const after = Date.parse("2031-01-01T00:00:00.000Z");
  const template = generateSubmissions(1, 12).next().value!;
  for (let round = 0; round < createRounds; round++) {
    const created = Array.from({ length: 1000 }, (_, i) => {
      const millis = after + round * 1000 + i;
      return { ...template, submissionId: `${millis.toString(16).padStart(12, "0")}-7000-7000-8000-${(round * 1000 + i).toString(16).padStart(12, "0")}`, createdAt: new Date(millis).toISOString() };
    });
    for (let k = 0; k < creators.length; k++) {
      const f = creators[(k + round) % creators.length]!;
      const started = cpu();
      for (let g = 0; g < created.length; g += 10) {
        const before = walIndex(f.file);
        const t = performance.now();
        await Promise.all(created.slice(g, g + 10).map((s) => f.store!.insertSubmission(ACCOUNT, s)));
        const ms = performance.now() - t;
        const now = walIndex(f.file);
        wall.get(f)!.push(ms);
        (now.copied !== before.copied || now.frames < before.frames ? copying : plain).get(f)!.push(ms);
      }
      await settle();
      cpuPer.get(f)!.push((cpu() - started) / created.length);
    }
  }
  console.log(`\ncreates, ${createRounds} rounds of 1,000 in groups of 10, taking turns`);
  console.log(`${"".padEnd(62)}${creators.map((f) => f.name.padStart(10)).join("")}`);
  console.log(`  ${"us of CPU a create, median of rounds".padEnd(60)}${creators.map((f) => percentile(cpuPer.get(f)!, 50).toFixed(1).padStart(10)).join("")}`);
  const row = (label: string, value: (f: Variant) => string) => console.log(`  ${label.padEnd(60)}${creators.map((f) => value(f).padStart(10)).join("")}`);
  row("ms a group, mean", (f) => (wall.get(f)!.reduce((a, b) => a + b, 0) / wall.get(f)!.length).toFixed(2));
  for (const [p, name] of [[50, "p50"], [90, "p90"], [95, "p95"], [99, "p99"], [99.9, "p99.9"], [100, "max"]] as const) {
    row(`ms a group, ${name}`, (f) => percentile(wall.get(f)!, p).toFixed(2));
  }
  row("groups during which frames were copied", (f) => String(copying.get(f)!.length));
  row("ms a group, median, of those", (f) => percentile(copying.get(f)!, 50).toFixed(2));
  row("ms a group, median, of the others", (f) => percentile(plain.get(f)!, 50).toFixed(2));
  if (creators.length === 2) {
    const [a, b] = creators.map((f) => cpuPer.get(f)!) as [number[], number[]];
    console.log(`  ${creators[0]!.name} lower in ${a.filter((v, i) => v < b[i]!).length} of ${createRounds} rounds`);
  }
}
for (const f of files) {
  if (f.store !== undefined) await f.store.close();
  else f.db!.close();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(f.file + suffix, { force: true });
}
