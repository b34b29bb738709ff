/** Running `formsink serve` as a real process for the fault tests, and faults made by real processes. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite, type Test } from "uvu";
import * as assert from "uvu/assert";
import { FORMSINK, runHere } from "../cli/run.ts";
import { collect, type Run, waitForOutput } from "../support/process.ts";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A suite whose every test gets a fresh temporary directory (`dir`), removed after it. */
export function suiteWithDir(name: string): Test<{ dir: string }> {
  const tests = suite<{ dir: string }>(name);
  tests.before.each((context) => {
    context.dir = mkdtempSync(join(tmpdir(), "formsink-faults-"));
  });
  tests.after.each((context) => rmSync(context.dir, { recursive: true, force: true }));
  return tests;
}

export interface Server {
  url: string;
  process: ChildProcess;
  /** Sends `signal` (SIGTERM unless told) and resolves with what the server wrote, once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<Run>;
}

/** How each runtime runs the `formsink` source: Deno with the permissions test/run.sh gives it. */
const RUNTIMES = {
  node: [process.execPath, ...FORMSINK],
  bun: [join(ROOT, "node_modules/.bin/bun"), join(ROOT, "cli/bin.ts")],
  deno: [join(ROOT, "node_modules/.bin/deno"), "run", "--allow-env", "--allow-sys", "--allow-ffi", "--allow-net=127.0.0.1", "--allow-read", "--allow-write", join(ROOT, "cli/bin.ts")],
};

/**
 * `formsink serve` on a free port, on Node unless `runtime` says otherwise; `command` runs it
 * under another command (such as `prlimit`).
 */
export async function serve(args: string[], options: { env?: Record<string, string>; command?: string[]; runtime?: keyof typeof RUNTIMES } = {}): Promise<Server> {
  const command = [...(options.command ?? []), ...RUNTIMES[options.runtime ?? "node"], "serve", "--port", "0", ...args];
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...options.env } });
  const exited = collect(child);
  try {
    const url = (await waitForOutput(child, "stdout", /serving (http:\/\/\S+)/))[1]!;
    return { url, process: child, stop: (signal = "SIGTERM") => (child.kill(signal), exited) };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

export async function newKey(db: string): Promise<string> {
  const created = await runHere(["keys", "create", "--account", "acme", "--db", db]);
  assert.is(created.code, 0, created.stderr);
  return created.stdout.trim();
}

export function create(url: string, key: string, email: string): Promise<Response> {
  return fetch(`${url}/api/submission`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ popupId: "p1", data: { email } }),
  });
}

export interface Lock {
  /** Resolves once the other process has committed and let the lock go. */
  released: Promise<void>;
  process: ChildProcess;
}

/**
 * Another process (the `libsql` package in a child) takes the write lock of the database file
 * with `BEGIN EXCLUSIVE` and keeps it for `holdMs`, as an operator's `sqlite3` session would.
 */
export async function holdWriteLock(path: string, holdMs: number): Promise<Lock> {
  const script = `
    const Database = require("libsql");
    const db = new Database(process.argv[1]);
    db.exec("BEGIN EXCLUSIVE");
    console.log("locked");
    setTimeout(() => { db.exec("COMMIT"); db.close(); console.log("released"); }, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ["-e", script, path, String(holdMs)], { cwd: ROOT });
  const released = waitForOutput(child, "stdout", /released/).then(() => undefined);
  released.catch(() => {});
  await waitForOutput(child, "stdout", /locked/);
  return { released, process: child };
}
