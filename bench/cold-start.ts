/**
 * Cold start (target 10): `formsink serve` from process start to its first 200 on a libSQL file
 * of 1,000,000 submissions. The server is the built CLI (`dist/cli/bin.js`, what `npx formsink`
 * runs), started 5 times on a free port; this process polls `GET /api/submission` (page 1 with its
 * total, with a secret key) every 2 ms from the moment of the spawn. For scale, the same for
 * `node -e` answering an empty `node:http` server.
 *
 *   node --import tsx bench/cold-start.ts [--quick]     (--quick: 100,000 submissions)
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { createApiKey } from "../src/auth/keys.ts";
import { createLibsqlStore } from "../src/stores/libsql/index.ts";
import type { Submission } from "../src/submission.ts";
import { generateSubmissions } from "./support/dataset.ts";
import { assertBuilt, formatTable } from "./support/load.ts";
import { reportTargets } from "./support/targets.ts";

const quick = process.argv.includes("--quick");
const ROWS = quick ? 100_000 : 1_000_000;
const RUNS = 5;
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DATA_DIR = fileURLToPath(new URL("./.data/", import.meta.url));
const DATABASE = `${DATA_DIR}cold-start-${ROWS}.db`;
const BIN = `${ROOT}dist/cli/bin.js`;

assertBuilt();

/** The database with ROWS submissions and a secret key for them, made once and kept. */
async function database(): Promise<string> {
  const keyFile = `${DATABASE}.key`;
  if (existsSync(DATABASE) && existsSync(keyFile)) {
    // Opened here first, so a schema migration never counts as start-up time.
    await (await createLibsqlStore({ url: `file:${DATABASE}` })).close();
    return readFileSync(keyFile, "utf8");
  }
  mkdirSync(DATA_DIR, { recursive: true });
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${DATABASE}${suffix}`, { force: true });
  const store = await createLibsqlStore({ url: `file:${DATABASE}` });
  try {
    const { key, record } = await createApiKey(store, { account: "bench" });
    let batch: Submission[] = [];
    for (const s of generateSubmissions(ROWS, 1)) {
      batch.push(s);
      if (batch.length === 5000) {
        await store.importSubmissions(record.accountId, batch);
        batch = [];
      }
    }
    writeFileSync(keyFile, key);
    return key;
  } finally {
    await store.close();
  }
}

/** Milliseconds from spawning `args` until `url` answers 200. */
async function timeToFirst200(args: string[], url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  try {
    for (;;) {
      const status = await fetch(url, { headers }).then((r) => r.arrayBuffer().then(() => r.status), () => 0);
      if (status === 200) return performance.now() - started;
      if (status !== 0) throw new Error(`${args.join(" ")} answered ${status}`);
      if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const key = await database();
console.log(`Node ${process.version}; ${ROWS.toLocaleString("en-US")} submissions; ${RUNS} starts each\n`);
/**
 * A port no socket holds now. A fixed range collided with this process's own connections, whose
 * local ports the system takes from the same range.
 */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
const runs = async (args: (port: number) => string[], path: string, headers: Record<string, string> = {}) => {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const port = await freePort();
    times.push(await timeToFirst200(args(port), `http://127.0.0.1:${port}${path}`, headers));
  }
  return times;
};
const bare = await runs((p) => ["-e", `require("node:http").createServer((q, s) => s.end("ok")).listen(${p}, "127.0.0.1")`], "/");
const formsink = await runs(
  (p) => [BIN, "serve", "--db", `file:${DATABASE}`, "--port", String(p)],
  "/api/submission",
  { "x-api-key": key },
);
const show = (times: number[]) => times.map((t) => t.toFixed(0)).join(", ");
console.log(formatTable(["server", "median ms", "runs ms"], [
  ["node -e (empty node:http server)", median(bare).toFixed(0), show(bare)],
  [`formsink serve, ${ROWS.toLocaleString("en-US")} rows, first list`, median(formsink).toFixed(0), show(formsink)],
]));
reportTargets([{
  target: 10,
  what: `cold start to first 200 (list + total), ${ROWS.toLocaleString("en-US")} rows, median of ${RUNS}`,
  measured: `${median(formsink).toFixed(0)} ms`,
  goal: "<= 300 ms",
  met: median(formsink) <= 300,
}]);
console.log(`\nheadline: formsink serve to first 200 on ${ROWS.toLocaleString("en-US")} rows in ${median(formsink).toFixed(0)} ms (an empty node:http server: ${median(bare).toFixed(0)} ms)`);
