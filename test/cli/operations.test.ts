// Running formsink as an operator does: its log piped to pino-pretty, its metrics scraped, a
// backup taken while it takes writes, a clean stop. Real processes, real files, real signals.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@libsql/client";
import { getMetricsFromIterator, type PromHistogramData } from "prom2javascript";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { MIGRATIONS } from "../../src/stores/sql/migrations.ts";
import { collect, waitForOutput } from "../support/process.ts";
import { within } from "../support/within.ts";
import { FORMSINK, run, runHere } from "./run.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUN = join(ROOT, "node_modules/.bin/bun");
const PINO_PRETTY = join(ROOT, "node_modules/pino-pretty/bin.js");
const MISSING_ID = "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11";

const ops = suite<{ dir: string; db: string }>("operations");

ops.before.each((context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-ops-"));
  context.db = `file:${join(context.dir, "live.db")}`;
});
ops.after.each((context) => rmSync(context.dir, { recursive: true, force: true }));

interface Server {
  url: string;
  process: ChildProcess;
  /** Sends SIGTERM and resolves with what the server wrote, once it has exited. */
  stop(): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

async function serve(args: string[], options: { runtime?: "node" | "bun"; env?: Record<string, string> } = {}): Promise<Server> {
  const command = options.runtime === "bun" ? [BUN, join(ROOT, "cli/bin.ts")] : [process.execPath, ...FORMSINK];
  const child = spawn(command[0]!, [...command.slice(1), "serve", "--port", "0", ...args], { env: { ...process.env, ...options.env } });
  const exited = collect(child);
  try {
    const url = (await waitForOutput(child, "stdout", /serving (http:\/\/\S+)/))[1]!;
    return { url, process: child, stop: () => (child.kill("SIGTERM"), exited) };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

async function newKey(db: string): Promise<string> {
  const created = await runHere(["keys", "create", "--account", "acme", "--db", db]);
  assert.is(created.code, 0, created.stderr);
  return created.stdout.trim();
}

function create(url: string, key: string, email: string): Promise<Response> {
  return fetch(`${url}/api/submission`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ popupId: "p1", data: { email } }),
  });
}

async function allIds(url: string, key: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 100) {
    const response = await fetch(`${url}/api/submission?limit=100&offset=${offset}`, { headers: { "x-api-key": key } });
    assert.is(response.status, 200);
    const page = (await response.json()) as { items: { submissionId: string }[]; total: number };
    for (const item of page.items) ids.add(item.submissionId);
    if (page.items.length < 100) return ids;
  }
}

async function countRows(file: string, table: string): Promise<number> {
  const client = createClient({ url: `file:${file}` });
  try {
    return Number((await client.execute(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0]!.n);
  } finally {
    client.close();
  }
}

function pipeThrough(command: string[], input: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env } });
  const done = collect(child);
  child.stdin!.end(input);
  return done;
}

ops("logs are pino-compatible JSON lines that pino-pretty renders; no key, query string or body in them", async ({ db }) => {
  const key = await newKey(db);
  const server = await serve(["--db", db]);
  const requestId = "edge-7f3a9c";
  let stopped: Awaited<ReturnType<Server["stop"]>>;
  try {
    const listed = await fetch(`${server.url}/api/submission?limit=5&authToken=query-secret-1b2c`, { headers: { "x-api-key": key, "x-request-id": requestId } });
    assert.is(listed.status, 200);
    assert.is(listed.headers.get("x-request-id"), requestId);
    assert.is((await create(server.url, key, "body-secret@example.com")).status, 201);
    assert.is((await fetch(`${server.url}/api/submission`)).status, 401);
  } finally {
    stopped = await server.stop();
  }
  const { code, stderr } = stopped;
  assert.is(code, 0, stderr);

  const lines = stderr.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  for (const line of lines) {
    assert.ok([30, 40, 50].includes(line.level as number), JSON.stringify(line));
    assert.type(line.time, "number");
    assert.is(line.pid, server.process.pid);
    assert.type(line.hostname, "string");
    assert.type(line.msg, "string");
  }
  const requests = lines.filter((line) => line.msg === "request completed");
  assert.equal(requests.map((line) => [line.req, line.res]), [
    [{ id: requestId, method: "GET", url: "/api/submission" }, { statusCode: 200 }],
    [{ id: (requests[1]!.req as { id: string }).id, method: "POST", url: "/api/submission" }, { statusCode: 201 }],
    [{ id: (requests[2]!.req as { id: string }).id, method: "GET", url: "/api/submission" }, { statusCode: 401 }],
  ]);
  for (const line of requests) assert.type(line.responseTime, "number");
  assert.ok(lines.some((line) => /SIGTERM: finishing in-flight requests/.test(line.msg as string)));
  assert.is(lines.at(-1)!.msg, "stopped: every request answered, the database closed", "the last line says the stop is done");
  for (const secret of [key, "query-secret-1b2c", "body-secret"]) assert.not.ok(stderr.includes(secret), `the log holds ${secret}`);

  const pretty = await pipeThrough([process.execPath, PINO_PRETTY], stderr, { NO_COLOR: "1", FORCE_COLOR: "0" });
  assert.is(pretty.code, 0, pretty.stderr);
  assert.match(pretty.stdout, /INFO \(\d+\): request completed\n\s+req: \{\n\s+"id": "edge-7f3a9c",\n\s+"method": "GET",\n\s+"url": "\/api\/submission"\n\s+\}\n\s+res: \{\n\s+"statusCode": 200\n/);
  assert.match(pretty.stdout, /"method": "POST",\n\s+"url": "\/api\/submission"\n\s+\}\n\s+res: \{\n\s+"statusCode": 201\n/);
});

ops("--log-format pretty writes short lines; bad --log-format and --metrics values are refused at start", async ({ db }) => {
  const server = await serve(["--db", db, "--log-format", "pretty"]);
  const id = (await fetch(`${server.url}/api/health`)).headers.get("x-request-id");
  const { stderr } = await server.stop();
  assert.match(stderr, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z GET /api/health 200 \\d+\\.\\dms ${id}$`, "m"));
  assert.match(stderr, /^No API keys yet/m);

  for (const [args, env, message] of [
    [["--log-format", "xml"], {}, /--log-format must be json or pretty \(got "xml"\)/],
    [[], { FORMSINK_LOG_FORMAT: "text" }, /FORMSINK_LOG_FORMAT must be json or pretty \(got "text"\)/],
    [["--metrics", "everywhere"], {}, /--metrics must be a port, or host:port/],
    [[], { FORMSINK_METRICS: "99999" }, /FORMSINK_METRICS must be a port, or host:port, such as 9464 or 0.0.0.0:9464 \(got "99999"\)/],
  ] as [string[], Record<string, string>, RegExp][]) {
    const result = await runHere(["serve", "--db", db, ...args], env);
    assert.is(result.code, 2, `${args.join(" ")} ${JSON.stringify(env)}: ${result.stderr}`);
    assert.match(result.stderr, message);
  }
});

ops("--metrics serves Prometheus text on its own port: requests by route pattern and status, store timings, process gauges", async ({ db }) => {
  const key = await newKey(db);
  const server = await serve(["--db", db, "--metrics", "127.0.0.1:0"]);
  try {
    const metricsUrl = (await waitForOutput(server.process, "stderr", /metrics at (http:\/\/[^\s"]+)/))[1]!;
    const list = () => fetch(`${server.url}/api/submission`, { headers: { "x-api-key": key } });
    for (let i = 0; i < 3; i++) assert.is((await list()).status, 200);
    for (let i = 0; i < 2; i++) assert.is((await create(server.url, key, `m${i}@example.com`)).status, 201);
    assert.is((await fetch(`${server.url}/api/submission/${MISSING_ID}`, { headers: { "x-api-key": key } })).status, 404);
    assert.is((await fetch(`${server.url}/api/submission`)).status, 401);
    assert.is((await fetch(`${server.url}/metrics`)).status, 404, "the public port has no metrics");

    const scraped = await fetch(metricsUrl);
    assert.is(scraped.status, 200);
    assert.match(scraped.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const metrics = await getMetricsFromIterator((await scraped.text()).split("\n")[Symbol.iterator]());
    assert.is((await fetch(metricsUrl.replace("/metrics", "/other"))).status, 404);

    const requests = metrics.formsink_http_request_duration_seconds!;
    assert.is(requests.type, "histogram");
    const countOf = (labels: Record<string, string>) =>
      (requests.data as PromHistogramData[]).find((series) => JSON.stringify(series.labels) === JSON.stringify(labels))?.count;
    assert.is(countOf({ method: "GET", route: "/api/submission", status: "200" }), 3);
    assert.is(countOf({ method: "POST", route: "/api/submission", status: "201" }), 2);
    assert.is(countOf({ method: "GET", route: "/api/submission/:submissionId", status: "404" }), 1);
    assert.is(countOf({ method: "GET", route: "/api/submission", status: "401" }), 1);
    for (const series of requests.data as PromHistogramData[]) {
      assert.is(series.buckets["+Inf"], series.count);
      assert.not.match(series.labels.route!, /[0-9a-f]{8}-/, "routes are patterns, never raw paths");
    }

    const operations = metrics.formsink_store_operation_duration_seconds!.data as PromHistogramData[];
    const operationCount = (name: string) => operations.find((series) => series.labels.operation === name)?.count;
    assert.is(operationCount("listSubmissionsAsJson"), 3, "the list route reads its page as JSON texts");
    assert.is(operationCount("insertSubmission"), 2);
    assert.is(operationCount("getSubmissionAsJson"), 1, "the get route reads its submission as JSON text");
    const rss = metrics.process_resident_memory_bytes!.data[0] as { value: number };
    assert.ok(rss.value > 0);
  } finally {
    const { code, stderr } = await server.stop();
    assert.is(code, 0, stderr);
  }
});

ops("serve applies the retention rules and prunes the change log once it is serving", async ({ dir, db }) => {
  const store = await createLibsqlStore({ url: db });
  const { key, record } = await createApiKey(store, { account: "acme" });
  await store.importSubmissions(record.accountId, [
    { submissionId: MISSING_ID, popupId: "p1", data: { email: "old@example.com" }, domain: "example.com", userAgent: "test", device: "desktop", status: "pending", createdAt: "2020-01-01T00:00:00.000Z" },
  ]);
  await store.setRetentionRules(record.accountId, [{ olderThanDays: 30 }]);
  await store.close();
  // The import's event, dated as old as its submission: past any event retention.
  const client = createClient({ url: db });
  await client.execute("UPDATE events SET at = 0");
  client.close();

  const server = await serve(["--db", db, "--event-retention-days", "1"]);
  try {
    await within(waitForOutput(server.process, "stderr", /retention: deleted 1 submissions/), 10_000, "the retention run");
    const page = await fetch(`${server.url}/api/submission`, { headers: { "x-api-key": key } }).then((r) => r.json() as Promise<{ total: number }>);
    assert.is(page.total, 0);
    for (let waited = 0; (await countRows(join(dir, "live.db"), "events WHERE at = 0")) > 0; waited += 50) {
      assert.ok(waited < 10_000, "the event past its retention is pruned");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await server.stop();
  }
});

ops("backup while the server takes creates: the restored database, served, has every create acknowledged before the backup began", async ({ dir, db }) => {
  const key = await newKey(db);
  const server = await serve(["--db", db]);
  const backup = join(dir, "snapshot.db");
  const acknowledged: { id: string; at: number }[] = [];
  let writing = true;
  let backupStarted = Infinity;
  try {
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        const response = await create(server.url, key, `w${n}-${i}@example.com`);
        assert.is(response.status, 201);
        acknowledged.push({ id: ((await response.json()) as { submissionId: string }).submissionId, at: performance.now() });
      }
    };
    const writers = [1, 2, 3, 4].map(writer);
    while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 20));
    backupStarted = performance.now();
    const result = await run(["backup", "--db", db, "--output", backup]);
    assert.is(result.code, 0, result.stderr);
    const afterBackup = acknowledged.length;
    while (acknowledged.length < afterBackup + 20) await new Promise((resolve) => setTimeout(resolve, 20));
    writing = false;
    await Promise.all(writers);
  } finally {
    writing = false;
    const { code, stderr } = await server.stop();
    assert.is(code, 0, stderr);
  }

  const client = createClient({ url: `file:${backup}` });
  try {
    assert.equal((await client.execute("PRAGMA integrity_check")).rows.map((row) => row[0]), ["ok"]);
  } finally {
    client.close();
  }
  assert.not.ok(existsSync(`${backup}-wal`), "the backup is one self-contained file");

  const fresh = `file:${join(dir, "restored.db")}`;
  const restored = await run(["restore", "--input", backup, "--db", fresh]);
  assert.is(restored.code, 0, restored.stderr);
  const second = await serve(["--db", fresh]);
  try {
    const ids = await allIds(second.url, key);
    const before = acknowledged.filter((write) => write.at < backupStarted);
    assert.ok(before.length >= 200);
    const missing = before.filter((write) => !ids.has(write.id));
    assert.equal(missing, [], `${missing.length} of ${before.length} acknowledged creates are missing`);
    const known = new Set(acknowledged.map((write) => write.id));
    assert.ok([...ids].every((id) => known.has(id)), "the backup holds only creates the server made");
  } finally {
    await second.stop();
  }
});

ops("backup and restore refuse to overwrite, damaged or too-new backups, and databases with data, unless --force", async ({ dir, db }) => {
  await newKey(db);
  const backup = join(dir, "b.db");
  assert.is((await runHere(["backup", "--db", db, "--output", backup])).code, 0);
  const again = await runHere(["backup", "--db", db, "--output", backup]);
  assert.is(again.code, 1);
  assert.match(again.stderr, /b\.db exists; pass --force to replace it/);
  assert.is((await runHere(["backup", "--db", db, "--output", backup, "--force"])).code, 0);
  assert.match((await runHere(["backup", "--db", `file:${join(dir, "none.db")}`, "--output", join(dir, "x.db")])).stderr, /no database at/);
  assert.not.ok(existsSync(join(dir, "none.db")), "backing up a missing database does not create it");
  assert.match((await runHere(["backup", "--db", "libsql://x.turso.io", "--output", join(dir, "x.db")])).stderr, /point-in-time restore/);
  assert.match((await runHere(["backup", "--db", db])).stderr, /backup needs --output FILE/);

  const target = join(dir, "target.db");
  // In processes of their own, with no connection to the target opened here before: a process
  // keeps the lock of a connection it closed until its statements are collected, which restore
  // would take for a server's. The restored key is counted at the end.
  const restored = await run(["restore", "--input", backup, "--db", `file:${target}`]);
  assert.is(restored.code, 0, restored.stderr);
  const busy = await run(["restore", "--input", backup, "--db", `file:${target}`]);
  assert.is(busy.code, 1, busy.stderr);
  assert.match(busy.stderr, /target\.db holds submissions or keys; pass --force to replace it/, busy.stderr);
  const forced = await run(["restore", "--input", backup, "--db", `file:${target}`, "--force"]);
  assert.is(forced.code, 0, forced.stderr);

  const damaged = join(dir, "damaged.db");
  const bytes = readFileSync(backup);
  bytes.fill(0x5a, 4096, bytes.length);
  writeFileSync(damaged, bytes);
  const newer = join(dir, "newer.db");
  copyFileSync(backup, newer);
  const client = createClient({ url: `file:${newer}` });
  await client.execute({ sql: "INSERT INTO formsink_migrations (version, applied_at) VALUES (?, 'later')", args: [MIGRATIONS.length + 5] });
  client.close();
  const notOurs = join(dir, "other.db");
  const other = createClient({ url: `file:${notOurs}` });
  await other.execute("CREATE TABLE t (x)");
  other.close();

  const empty = join(dir, "empty.db");
  for (const [input, message] of [
    [damaged, /damaged|malformed|not a database/],
    [newer, new RegExp(`schema version ${MIGRATIONS.length + 5}, newer than this formsink knows \\(${MIGRATIONS.length}\\)`)],
    [notOurs, /not a formsink database/],
    [join(dir, "absent.db"), /no backup at/],
  ] as [string, RegExp][]) {
    const result = await runHere(["restore", "--input", input, "--db", `file:${empty}`]);
    assert.is(result.code, 1, `${input}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.not.ok(existsSync(empty), `a refused restore of ${input} leaves no database behind`);
  }
  assert.is(statSync(target).size > 0 && (await countRows(target, "api_keys")), 1, "a refused restore leaves the target as it was");
});

ops("a backup or restore killed midway leaves FILE.partial in sight, and the next one for that file removes it and succeeds", async ({ dir, db }) => {
  await newKey(db);
  const backup = join(dir, "b.db");
  const target = join(dir, "target.db");
  // What a kill -9 in the middle leaves: VACUUM INTO's file and journal, the restore's staged copy and its WAL.
  const leftovers = [`${backup}.partial`, `${backup}.partial-journal`, `${target}.partial`, `${target}.partial-wal`];
  for (const file of leftovers) writeFileSync(file, "half of a file");
  const backedUp = await runHere(["backup", "--db", db, "--output", backup]);
  assert.is(backedUp.code, 0, backedUp.stderr);
  // In a process of its own: see the test above.
  const restored = await run(["restore", "--input", backup, "--db", `file:${target}`]);
  assert.is(restored.code, 0, restored.stderr);
  for (const file of leftovers) assert.not.ok(existsSync(file), `${file} is left`);
  assert.is(await countRows(target, "api_keys"), 1);
});

ops("a backup whose disk refuses the file (a file size limit, as a full disk or a quota) names both files and leaves nothing", async ({ dir, db }) => {
  await newKey(db);
  const backup = join(dir, "b.db");
  // RLIMIT_FSIZE needs no root: the database is only read, the backup grows past the limit.
  const child = spawn("/usr/bin/prlimit", ["--fsize=100000", process.execPath, ...FORMSINK, "backup", "--db", db, "--output", backup]);
  const result = await collect(child);
  assert.is(result.code, 1, result.stderr);
  assert.match(result.stderr, /^formsink: backup of \S+live\.db to \S+b\.db failed: disk I\/O error\n$/);
  assert.not.ok(existsSync(backup) || existsSync(`${backup}.partial`), "no backup, whole or partial, is left");
});

ops("restore refuses a database a server has open, even with --force, and takes one a crashed server left", async ({ dir, db }) => {
  // Every command in a process of its own, as an operator runs them: see the test above.
  const created = await run(["keys", "create", "--account", "acme", "--db", db]);
  const key = created.stdout.trim();
  const backup = join(dir, "b.db");
  assert.is((await run(["backup", "--db", db, "--output", backup])).code, 0);
  const server = await serve(["--db", db]);
  let crashed = false;
  try {
    assert.is((await create(server.url, key, "after-backup@example.com")).status, 201);
    const refused = await run(["restore", "--input", backup, "--db", db, "--force"]);
    assert.is(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /live\.db is open in another process \(a running formsink serve\?\); stop it, then restore/);
    assert.is((await create(server.url, key, "still-served@example.com")).status, 201, "the server goes on writing to its file");
    server.process.kill("SIGKILL");
    await new Promise((resolve) => server.process.once("exit", resolve));
    crashed = true;
  } finally {
    if (!crashed) await server.stop();
  }
  const restored = await run(["restore", "--input", backup, "--db", db, "--force"]);
  assert.is(restored.code, 0, restored.stderr);
  assert.is(await countRows(join(dir, "live.db"), "submissions"), 0, "the backup's contents, not the crashed server's");
});

for (const runtime of ["node", "bun"] as const) {
  ops(`a clean stop under ${runtime} leaves the .db self-contained: a copy of that file alone holds every create`, async ({ dir, db }) => {
    const key = await newKey(db);
    const server = await serve(["--db", db], { runtime });
    try {
      for (let i = 0; i < 25; i++) assert.is((await create(server.url, key, `s${i}@example.com`)).status, 201);
    } finally {
      const { code, stderr } = await server.stop();
      assert.is(code, 0, stderr);
    }
    const copy = join(dir, "copy.db");
    copyFileSync(join(dir, "live.db"), copy);
    assert.is(await countRows(copy, "submissions"), 25);
  });
}

ops.run();
