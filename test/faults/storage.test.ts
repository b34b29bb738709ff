// Storage that fails under the server: a full disk, a disk that refuses writes (a quota, a
// file size limit), a file corrupt where a request reads it, a database file deleted or
// replaced while serving. Each gets its own answer; nothing acknowledged is lost.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import * as assert from "uvu/assert";
import { create, newKey, serve, suiteWithDir } from "./support.ts";

const PRLIMIT = "/usr/bin/prlimit";

const storage = suiteWithDir("storage faults");

/** Fills the file system holding `dir` to the last byte; returns the filler file, to delete. */
function fill(dir: string): string {
  const filler = join(dir, "filler");
  try {
    execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
  } catch {
    // dd ends with "No space left on device": the point.
  }
  return filler;
}

/** A log line of `--log-format json`, as far as these tests read it. */
interface LogLine {
  level: number;
  msg: string;
  err?: { message: string; stack: string };
  res?: { statusCode: number };
}

function logLines(log: string): LogLine[] {
  return log.trim().split("\n").map((line) => JSON.parse(line) as LogLine);
}

/** The log's lines with an error's detail: what a storage fault writes once, not per request. */
function errorLines(log: string): LogLine[] {
  return logLines(log).filter((line) => line.err !== undefined);
}

storage("a full disk: writes get 507 with a clear message, reads still work, and writes work again once space is freed; the log has the fault's detail once, a line per request, and its end", async ({ dir }) => {
  assert.is(process.getuid?.(), 0, "this test mounts a small tmpfs to fill it, which needs root: run it as root (CI does)");
  const mount = join(dir, "small");
  mkdirSync(mount);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mount]);
  try {
    const db = `file:${join(mount, "live.db")}`;
    const key = await newKey(db);
    const server = await serve(["--db", db, "--log-format", "json"]);
    let log: string;
    try {
      assert.is((await create(server.url, key, "before@example.com")).status, 201);
      const filler = fill(mount);
      let refused: Response | undefined;
      // The WAL may still have room for a few writes: write until the disk says no.
      for (let i = 0; i < 200 && refused === undefined; i++) {
        const answer = await create(server.url, key, `${"x".repeat(30_000)}-${i}@example.com`);
        if (answer.status !== 201) refused = answer;
      }
      assert.ok(refused, "the disk never filled");
      assert.is(refused!.status, 507, await refused!.clone().text());
      assert.match(((await refused!.json()) as { message: string }).message, /no space left/i);
      for (let i = 0; i < 5; i++) assert.is((await create(server.url, key, `${"x".repeat(30_000)}-again-${i}@example.com`)).status, 507);
      assert.is((await fetch(`${server.url}/api/submission?popupId=p1&limit=1`, { headers: { "x-api-key": key } })).status, 200);
      // The server still answers reads: the health check stays 200 (operations.md, Health).
      assert.equal(await (await fetch(`${server.url}/api/health`)).json(), { status: "ok" });

      rmSync(filler);
      const after = await create(server.url, key, "after@example.com");
      assert.is(after.status, 201, await after.clone().text());
    } finally {
      log = (await server.stop()).stderr;
    }
    // Six writes refused: one line with the fault's detail (its cause, SQLite's error, in the
    // stack), a request line for each, and one line when a write succeeds again.
    const [fault, ...more] = errorLines(log);
    assert.equal(more, [], log);
    assert.is(fault!.level, 50);
    assert.match(fault!.msg, /^storage fault: The database has no space left/, log);
    assert.match(fault!.err!.stack, /caused by: .*full/i, log);
    assert.is(logLines(log).filter((line) => line.res?.statusCode === 507).length, 6, log);
    const over = logLines(log).filter((line) => line.msg.startsWith("storage fault over"));
    assert.equal(over.map((line) => [line.level, line.msg]), [[30, "storage fault over, a write succeeded: The database has no space left for this write (6 requests failed by it)"]], log);
  } finally {
    execFileSync("umount", ["-l", mount]);
  }
});

storage("the database file deleted or replaced while serving: writes and the health check get 503 and an error in the log, never an acknowledgement into a lost file", async ({ dir }) => {
  for (const fault of ["deleted", "replaced"] as const) {
    const path = join(dir, `${fault}.db`);
    const key = await newKey(`file:${path}`);
    const server = await serve(["--db", `file:${path}`, "--log-format", "json"]);
    let log = "";
    try {
      assert.is((await create(server.url, key, "before@example.com")).status, 201);
      if (fault === "deleted") rmSync(path);
      else {
        writeFileSync(`${path}.new`, "");
        renameSync(`${path}.new`, path);
      }
      const refused = await create(server.url, key, "after@example.com");
      assert.is(refused.status, 503, `${fault}: ${await refused.clone().text()}`);
      assert.match(((await refused.json()) as { message: string }).message, /deleted or replaced/);
      const health = await fetch(`${server.url}/api/health`);
      assert.is(health.status, 503, `${fault}: the health check fails too`);
    } finally {
      log = (await server.stop()).stderr;
    }
    assert.match(log, /"level":50.*deleted or replaced/, log);
  }
});

storage("a disk that refuses to grow the files (a file size limit, as a disk quota): writes get 503 naming the disk, reads go on, the stop is clean, and nothing acknowledged is lost", async ({ dir }) => {
  const path = join(dir, "live.db");
  const key = await newKey(`file:${path}`);
  const big = (i: number) => `${"x".repeat(30_000)}-${i}@example.com`;
  // A file larger than the room left after it: a WAL filled to the limit holds more new pages
  // than that room, so folding it into the file at the stop fails too.
  const before = await serve(["--db", `file:${path}`]);
  try {
    for (let i = 0; i < 20; i++) assert.is((await create(before.url, key, big(i))).status, 201);
  } finally {
    await before.stop();
  }
  // RLIMIT_FSIZE needs no root: past it a write fails with EFBIG, which SQLite reports as an
  // I/O error, as it does a quota's EDQUOT.
  const limit = statSync(path).size + 300_000;
  const server = await serve(["--db", `file:${path}`, "--log-format", "json"], { command: [PRLIMIT, `--fsize=${limit}`] });
  const acknowledged: string[] = [];
  let refused: Response | undefined;
  let stop: Awaited<ReturnType<typeof server.stop>>;
  try {
    for (let i = 0; i < 100 && refused === undefined; i++) {
      const answer = await create(server.url, key, big(i));
      if (answer.status === 201) acknowledged.push(((await answer.json()) as { submissionId: string }).submissionId);
      else refused = answer;
    }
    assert.ok(refused, "the limit was never reached");
    assert.is(refused!.status, 503, await refused!.clone().text());
    assert.is(refused!.headers.get("retry-after"), "5");
    assert.match(((await refused!.json()) as { message: string }).message, /disk failed to read or write/);
    for (let i = 0; i < 5; i++) assert.is((await create(server.url, key, big(100 + i))).status, 503);
    const list = await fetch(`${server.url}/api/submission?popupId=p1&limit=1`, { headers: { "x-api-key": key } });
    assert.is(list.status, 200);
    assert.equal(await (await fetch(`${server.url}/api/health`)).json(), { status: "ok" }, "reads go on: the health check stays 200");
  } finally {
    stop = await server.stop();
  }
  // The fault's detail once, SQLite's error as its cause; each refused write a request line.
  const [fault, ...more] = errorLines(stop.stderr);
  assert.equal(more, [], stop.stderr);
  assert.is(fault!.level, 50);
  assert.match(fault!.msg, /^storage fault: The database's disk failed to read or write/, stop.stderr);
  assert.match(fault!.err!.stack, /caused by: .*(I\/O|IOERR)/i, stop.stderr);
  assert.is(logLines(stop.stderr).filter((line) => line.res?.statusCode === 503).length, 6, stop.stderr);
  assert.ok(acknowledged.length > 0, "nothing was acknowledged before the limit");
  // The WAL could not be folded into the file: it stays, and the stop is still a clean one.
  assert.is(stop.code, 0, stop.stderr);
  assert.match(stop.stderr, /"msg":"stopped: every request answered, the database closed"}\n$/);
  assert.ok(statSync(`${path}-wal`).size > 0, "the WAL holds the writes the file could not take");

  const db = new Database(path);
  try {
    const rows = new Set((db.prepare("SELECT id FROM submissions").all() as { id: string }[]).map((row) => row.id));
    for (const id of acknowledged) assert.ok(rows.has(id), `acknowledged ${id} is lost`);
    assert.equal(db.prepare("PRAGMA integrity_check").all(), [{ integrity_check: "ok" }]);
  } finally {
    db.close();
  }
});

storage("a file corrupt where a request reads it: 503 naming it, never a bare 500; an export it cuts is cut for its client too, and said so in the log", async ({ dir }) => {
  const path = join(dir, "live.db");
  const key = await newKey(`file:${path}`);
  let server = await serve(["--db", `file:${path}`]);
  const ids: string[] = [];
  try {
    for (let i = 0; i < 60; i++) {
      const answer = await create(server.url, key, `${"x".repeat(3000)}-${i}@example.com`);
      ids.push(((await answer.json()) as { submissionId: string }).submissionId);
    }
  } finally {
    await server.stop();
  }
  // The stop folded the WAL into the file: overwrite pages in its middle, where the rows are.
  const file = openSync(path, "r+");
  const middle = Math.floor(statSync(path).size / 2 / 4096) * 4096;
  writeSync(file, Buffer.alloc(8 * 4096, 0xad), 0, 8 * 4096, middle);
  closeSync(file);

  server = await serve(["--db", `file:${path}`, "--log-format", "json"]);
  let log: string;
  try {
    const statuses = new Map<number, number>();
    let message = "";
    for (const id of ids) {
      const answer = await fetch(`${server.url}/api/submission/${id}`, { headers: { "x-api-key": key } });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status !== 200) message = ((await answer.json()) as { message: string }).message;
      else await answer.body?.cancel();
    }
    assert.equal([...statuses.keys()].sort(), [200, 503], `statuses: ${JSON.stringify([...statuses])}`);
    assert.is(message, "The database file is corrupt");
    assert.is((await fetch(`${server.url}/api/health`)).status, 200, "the rest of the file answers: the health check stays 200");
    const exported = await fetch(`${server.url}/api/submission/export?popupId=p1&format=ndjson`, { headers: { "x-api-key": key } });
    assert.is(exported.status, 200);
    let cut = false;
    await exported.text().catch(() => (cut = true));
    assert.ok(cut, "the export's transfer ends as if complete");
  } finally {
    log = (await server.stop()).stderr;
  }
  // Every line of the log is JSON (a log shipper reads each), the cut export's failure among them.
  const lines = log.trim().split("\n").map((line) => JSON.parse(line) as { level: number; msg: string });
  assert.ok(lines.some((line) => line.level === 50 && line.msg === "a response failed: The database file is corrupt"), log);
});

storage.run();
