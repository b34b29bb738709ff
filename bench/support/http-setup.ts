/**
 * What bench/http.ts and bench/baseline.ts share: the libSQL file of submissions formsink serves
 * (made once through `importSubmissions`, kept in bench/.data/), a working copy per run, the
 * requests (list page 1 + total by popupId and status, get by id, create) and how one workload
 * is measured against a server process.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createApiKey } from "../../src/auth/keys.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import type { Submission } from "../../src/submission.ts";
import { generateSubmissions, POPUPS, STATUSES } from "./dataset.ts";
import { cpuSeconds, type LoadOptions, type LoadResult, runLoad, threadCpuSeconds } from "./load.ts";

export const DATA_DIR = fileURLToPath(new URL("../.data/", import.meta.url));
const IMPORT_BATCH = 5000;

export interface HttpDatabase {
  path: string;
  /** The secret key of its one account. */
  key: string;
  /** The ids of its submissions, to get by id. */
  ids: string[];
}

/** The database of `rows` submissions and its secret key, made once. */
export async function httpDatabase(rows: number): Promise<HttpDatabase> {
  const path = `${DATA_DIR}http-${rows}.db`;
  const keyFile = `${path}.key`;
  const idsFile = `${path}.ids`;
  if (existsSync(path) && existsSync(keyFile) && existsSync(idsFile)) {
    console.log(`database: reusing ${path}`);
    // Opened once here, so that a schema migration runs in this process, not in the server's.
    await (await createLibsqlStore({ url: `file:${path}` })).close();
    return { path, key: readFileSync(keyFile, "utf8"), ids: readFileSync(idsFile, "utf8").split("\n") };
  }
  mkdirSync(DATA_DIR, { recursive: true });
  for (const suffix of ["", "-wal", "-shm", ".key", ".ids"]) rmSync(`${path}${suffix}`, { force: true });
  const store = await createLibsqlStore({ url: `file:${path}` });
  try {
    const { key, record } = await createApiKey(store, { account: "bench" });
    const started = performance.now();
    const ids: string[] = [];
    let batch: Submission[] = [];
    for (const submission of generateSubmissions(rows)) {
      batch.push(submission);
      ids.push(submission.submissionId);
      if (batch.length === IMPORT_BATCH) {
        await store.importSubmissions(record.accountId, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await store.importSubmissions(record.accountId, batch);
    console.log(`database: imported ${rows.toLocaleString("en-US")} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    writeFileSync(idsFile, ids.join("\n"));
    writeFileSync(keyFile, key);
    return { path, key, ids };
  } finally {
    await store.close();
  }
}

/** A copy of `path` (and its WAL, if one was left) as `copy`, so that one run's creates do not change the next one's data. */
export function workingCopy(path: string, copy: string): string {
  for (const suffix of ["", "-wal", "-shm"]) {
    rmSync(`${copy}${suffix}`, { force: true });
    if (existsSync(`${path}${suffix}`)) copyFileSync(`${path}${suffix}`, `${copy}${suffix}`);
  }
  return copy;
}

export function removeDatabase(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
}

/** `GET /api/submission`, page 1 with its total, for each popup and status in turn. */
export function listRequests(key: string) {
  return POPUPS.flatMap((popupId) =>
    STATUSES.map((status) => ({ method: "GET" as const, path: `/api/submission?popupId=${popupId}&status=${status}`, headers: { "x-api-key": key } })),
  );
}

const CREATE_BODY = JSON.stringify({
  popupId: "popup_3",
  data: { email: "visitor@example.com", name: "A Visitor", message: "I would like to hear more about the spring offer, please call me back.", consent: true },
});

/** `POST /api/submission` with a 200-byte lead. */
export function createRequest(key: string) {
  return { method: "POST" as const, path: "/api/submission", headers: { "x-api-key": key, "content-type": "application/json" }, body: CREATE_BODY };
}

export interface Measured extends LoadResult {
  /** The server's CPU time per request: what a request costs, however fast the load came. */
  serverMicros: number;
  /** `serverMicros` split by the server's threads (threadCpuSeconds). */
  threadMicros: Record<string, number>;
  /** The CPU time per request of what `databaseCpuSeconds` counts (a database server's processes), when given. */
  databaseMicros?: number;
}

/**
 * Load before the measured window. V8 keeps compiling a workload's path on its helper threads
 * for the first seconds that workload runs (http.ts `--threads` shows them), and on the one
 * core a server is pinned to they take the event loop's time: a shorter warm-up measures that
 * compilation, which a server that has been up for a while no longer does, as if every request
 * paid for it.
 */
export const WARM_UP_SECONDS = 5;

/**
 * A warm-up of WARM_UP_SECONDS (JIT, connections, pages), then `seconds` of load; fails on any
 * error or answer not 2xx. `databaseCpuSeconds`, when given, is read around the same window.
 */
export async function measure(
  name: string,
  load: Omit<LoadOptions, "url" | "durationSeconds">,
  url: string,
  serverPid: number,
  seconds: number,
  databaseCpuSeconds?: () => number,
): Promise<Measured> {
  await runLoad({ url, ...load, durationSeconds: WARM_UP_SECONDS });
  const cpuBefore = cpuSeconds(serverPid);
  const threadsBefore = threadCpuSeconds(serverPid);
  const databaseBefore = databaseCpuSeconds?.();
  const result = await runLoad({ url, ...load, durationSeconds: seconds });
  const requests = result.requestsPerSecond * seconds;
  const serverMicros = ((cpuSeconds(serverPid) - cpuBefore) * 1e6) / requests;
  const threadMicros = Object.fromEntries(
    Object.entries(threadCpuSeconds(serverPid)).map(([kind, seconds]) => [kind, ((seconds - (threadsBefore[kind] ?? 0)) * 1e6) / requests]),
  );
  const databaseMicros = databaseCpuSeconds && ((databaseCpuSeconds() - databaseBefore!) * 1e6) / requests;
  if (result.errors + result.non2xx > 0) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} answers not 2xx`);
  return databaseMicros === undefined ? { ...result, serverMicros, threadMicros } : { ...result, serverMicros, threadMicros, databaseMicros };
}
