// Commands started on a database they cannot use: one clear line on stderr, exit code 3, no
// stack trace, and `serve` never says it is serving.
import { execFileSync, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { FORMSINK, runHere } from "../cli/run.ts";
import { collect, type Run, waitForOutput } from "../support/process.ts";
import { newKey, suiteWithDir } from "./support.ts";

const EXIT_STORAGE = 3;
const COMMANDS = [["serve", "--port", "0"], ["keys", "list"], ["export", "--account", "acme"]];

const start = suiteWithDir("commands on a database they cannot use");

function serveRefused(db: string): Promise<Run> {
  const child = spawn(process.execPath, [...FORMSINK, "serve", "--port", "0", "--db", db]);
  const exited = collect(child);
  waitForOutput(child, "stdout", /serving/).then(() => child.kill("SIGKILL"), () => {});
  return exited;
}

async function expectRefused(db: string, reason: RegExp): Promise<void> {
  for (const command of COMMANDS) {
    const what = `${command[0]} on ${db}`;
    // serve in a process of its own, killed if it serves; the others in this one, as faster.
    const result = command[0] === "serve" ? await serveRefused(db) : await runHere([...command, "--db", db]);
    assert.is(result.code, EXIT_STORAGE, `${what}: ${result.stderr}`);
    assert.match(result.stderr, reason, what);
    assert.is(result.stderr.trim().split("\n").length, 1, `${what}: one line, no stack trace:\n${result.stderr}`);
    assert.not.match(result.stdout, /serving/, what);
  }
}

start("a partly corrupt database file", async ({ dir }) => {
  const path = join(dir, "live.db");
  await newKey(`file:${path}`);
  await newKey(`file:${path}`);
  // Pages past the schema's: the file opens, and the first query that reads them fails.
  const file = openSync(path, "r+");
  writeSync(file, Buffer.alloc(3 * 4096, 0xad), 0, 3 * 4096, 2 * 4096);
  closeSync(file);
  await expectRefused(`file:${path}`, /^formsink: .*the database file is corrupt; restore it from a backup/);
});

start("a file that is not a database", async ({ dir }) => {
  const path = join(dir, "notes.db");
  const file = openSync(path, "w");
  writeSync(file, "not a database ".repeat(500));
  closeSync(file);
  await expectRefused(`file:${path}`, /^formsink: cannot open database .*: the file is not a SQLite database/);
});

start("a directory that does not exist", async ({ dir }) => {
  await expectRefused(`file:${join(dir, "missing", "live.db")}`, /^formsink: cannot open database .*: the directory .*missing does not exist$/m);
});

start("a read-only directory: the -wal and -shm files cannot be made there", async ({ dir }) => {
  assert.is(process.getuid?.(), 0, "this test makes a read-only bind mount (root can write anywhere else), which needs root: run it as root (CI does)");
  const data = join(dir, "data");
  const readOnly = join(dir, "ro");
  mkdirSync(data);
  mkdirSync(readOnly);
  await newKey(`file:${join(data, "live.db")}`);
  execFileSync("mount", ["--bind", data, readOnly]);
  try {
    execFileSync("mount", ["-o", "remount,bind,ro", readOnly]);
    await expectRefused(`file:${join(readOnly, "live.db")}`, /^formsink: cannot open database .*: the directory .*ro is not writable \(SQLite creates the database's -wal and -shm files there\)$/m);
  } finally {
    execFileSync("umount", ["-l", readOnly]);
  }
});

start.run();
