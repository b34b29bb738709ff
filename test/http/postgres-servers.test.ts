/**
 * Several `formsink serve` processes on one PostgreSQL database (a throwaway cluster,
 * test/support/postgres.ts), as behind a load balancer: what one server does, the other sees at
 * once, and the two between them send a webhook endpoint every event. Then the database
 * restarted under load: requests get a clear 503 (never a hang: every request has a deadline),
 * the server recovers by itself, and nothing acknowledged is lost.
 */
import { type ChildProcess, spawn } from "node:child_process";
import postgres from "postgres";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { FORMSINK, runHere } from "../cli/run.ts";
import { collect, type Run, waitForOutput } from "../support/process.ts";
import { startReceiver } from "../support/webhook-receiver.ts";
import { DEFAULT_ENDPOINT_CONCURRENCY } from "../../src/webhooks/dispatcher.ts";
import { sharedCluster, stopClusterAfterSuites } from "../support/postgres.ts";
import { roomInWindow } from "../support/rate-window.ts";

/** How long any one request may take before the test fails it: a hang fails, it does not stall the run. */
const REQUEST_DEADLINE_MS = 30_000;

interface Server {
  url: string;
  process: ChildProcess;
  exited: Promise<Run>;
  stop(): Promise<Run>;
}

async function serve(databaseUrl: string): Promise<Server> {
  const child = spawn(process.execPath, [...FORMSINK, "serve", "--port", "0", "--rate-limits", "database", "--log-format", "json", "--allow-private-webhooks"], {
    env: { ...process.env, FORMSINK_DB: databaseUrl },
  });
  const exited = collect(child);
  try {
    const url = (await waitForOutput(child, "stdout", /serving (http:\/\/\S+)/))[1]!;
    return { url, process: child, exited, stop: () => (child.kill("SIGTERM"), exited) };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

async function call(url: string, method: string, path: string, options: { key: string; json?: unknown; headers?: Record<string, string> }) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "x-api-key": options.key, ...(options.json === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
    signal: AbortSignal.timeout(REQUEST_DEADLINE_MS),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

async function newKey(databaseUrl: string, ...args: string[]): Promise<string> {
  return (await newKeyWithPrefix(databaseUrl, ...args)).key;
}

async function newKeyWithPrefix(databaseUrl: string, ...args: string[]): Promise<{ key: string; prefix: string }> {
  const created = await runHere(["keys", "create", "--account", "acme", ...args, "--db", databaseUrl]);
  assert.is(created.code, 0, created.stderr);
  return { key: created.stdout.trim(), prefix: /Created \w+ key (\S+) /.exec(created.stderr)![1]! };
}

const servers = suite<{ url: string; drop: () => Promise<void>; a: Server; b: Server; sql: postgres.Sql }>("two servers on one PostgreSQL database");

servers.before(async (context) => {
  const database = await (await sharedCluster()).createDatabase();
  context.url = database.url;
  context.drop = database.drop;
  await newKey(database.url); // migrates before the servers start
  [context.a, context.b] = await Promise.all([serve(database.url), serve(database.url)]);
  context.sql = postgres(database.url, { max: 2, onnotice: () => {} });
});
servers.after(async ({ a, b, sql, drop }) => {
  await Promise.all([a?.stop(), b?.stop(), sql?.end({ timeout: 1 })]);
  await drop?.();
});

servers("a publishable key's rate limit is shared: 40 creates split over both servers, 30 get in", async ({ url, a, b }) => {
  const key = await newKey(url, "--kind", "publishable", "--domain", "shop.example.com");
  const create = (server: Server) =>
    call(server.url, "POST", "/api/submission", { key, json: { popupId: "limited", data: {} }, headers: { origin: "https://shop.example.com" } });
  await roomInWindow(60, 10_000);
  const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => create(i % 2 === 0 ? a : b)));
  const statuses = replies.map((reply) => reply.status);
  // Each server alone would take its 20: only a count both share stops at 30.
  assert.is(statuses.filter((status) => status === 201).length, 30);
  assert.is(statuses.filter((status) => status === 429).length, 10);
});

servers("one Idempotency-Key sent to both servers at once stores one submission, and both answer it", async ({ url, a, b, sql }) => {
  const key = await newKey(url);
  for (let round = 0; round < 20; round++) {
    const idempotencyKey = `race-${round}-${crypto.randomUUID()}`;
    const send = (server: Server) =>
      call(server.url, "POST", "/api/submission", { key, json: { popupId: "race", data: { round } }, headers: { "idempotency-key": idempotencyKey } });
    const [fromA, fromB] = await Promise.all([send(a), send(b)]);
    assert.ok([fromA.status, fromB.status].every((status) => status === 201 || status === 200), `${fromA.text} ${fromB.text}`);
    assert.is(fromA.json!.submissionId, fromB.json!.submissionId, "both answer the one submission");
  }
  const [counted] = await sql`SELECT COUNT(*)::int AS stored FROM submissions WHERE popup_id = 'race'`;
  assert.is(counted!.stored, 20);
});

servers("totals equal COUNT(*) after status changes and deletes raced on both servers", async ({ url, a, b, sql }) => {
  const key = await newKey(url);
  const ids = await Promise.all(
    Array.from({ length: 60 }, async (_, i) => {
      const reply = await call(i % 2 === 0 ? a.url : b.url, "POST", "/api/submission", { key, json: { popupId: "totals", data: { i } } });
      assert.is(reply.status, 201, reply.text);
      return String(reply.json!.submissionId);
    }),
  );
  // Every row gets changes from both servers at once: the same status twice, a status and a delete, two deletes.
  await Promise.all(
    ids.flatMap((id, i) => {
      const path = `/api/submission/${id}`;
      const patch = (server: Server, status: string) => call(server.url, "PATCH", path, { key, json: { status } });
      const remove = (server: Server) => call(server.url, "DELETE", path, { key });
      if (i % 3 === 0) return [patch(a, "completed"), patch(b, "completed")];
      if (i % 3 === 1) return [patch(a, "completed"), remove(b)];
      return [remove(a), remove(b), patch(b, "pending")];
    }),
  );
  const total = async (server: Server, query: string) => (await call(server.url, "GET", `/api/submission?popupId=totals${query}`, { key })).json!.total;
  for (const [query, where] of [["", ""], ["&status=completed", "AND status = 'completed'"], ["&status=pending", "AND status = 'pending'"]] as const) {
    const [counted] = await sql.unsafe(`SELECT COUNT(*)::int AS rows FROM submissions WHERE popup_id = 'totals' ${where}`);
    assert.is(await total(a, query), counted!.rows, `total${query} on one server`);
    assert.is(await total(b, query), counted!.rows, `total${query} on the other`);
  }
  const [left] = await sql`SELECT COUNT(*)::int AS survivors FROM submissions WHERE popup_id = 'totals'`;
  assert.is(left!.survivors, 20, "only the rows never deleted remain");
});

servers("a key revoked is refused by both servers on their next request", async ({ url, a, b }) => {
  const { key, prefix } = await newKeyWithPrefix(url);
  for (const server of [a, b]) assert.is((await call(server.url, "GET", "/api/submission", { key })).status, 200);
  const revoked = await runHere(["keys", "revoke", prefix, "--db", url]);
  assert.is(revoked.code, 0, revoked.stderr);
  for (const server of [a, b]) assert.is((await call(server.url, "GET", "/api/submission", { key })).status, 401);
});

servers("one endpoint, both servers sending: every event delivered, started in commit order, no attempt sent twice at once", async ({ url, a, b }) => {
  const key = await newKey(url);
  const receiver = await startReceiver();
  receiver.delayMs = 20;
  try {
    const added = await call(a.url, "POST", "/api/webhooks", { key, json: { url: `${receiver.url}/hooks`, popupId: "hooks" } });
    assert.is(added.status, 201, added.text);
    await Promise.all([a, b].map(async (server, s) => {
      for (let i = 0; i < 30; i++) {
        const created = await call(server.url, "POST", "/api/submission", { key, json: { popupId: "hooks", data: { s, i } } });
        assert.is(created.status, 201, created.text);
      }
    }));
    const feed = await call(b.url, "GET", "/api/events?popupId=hooks&limit=1000", { key });
    const events = (feed.json!.items as { id: string }[]).map((event) => event.id);
    assert.is(events.length, 60);
    const deadline = Date.now() + 60_000;
    while (receiver.received.length < events.length) {
      if (Date.now() > deadline) throw new Error(`only ${receiver.received.length} of ${events.length} events were delivered`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const arrived = receiver.received.map((delivery) => delivery.id);
    assert.equal([...arrived].sort(), [...events].sort(), "each event once");
    // Started in the feed's order, a few at once: each arrives after every one that many before it.
    const late = arrived.filter((id, i) => events.slice(0, Math.max(0, events.indexOf(id) - DEFAULT_ENDPOINT_CONCURRENCY + 1)).some((earlier) => !arrived.slice(0, i).includes(earlier)));
    assert.equal(late, [], "in the feed's order, but for the ones under way at once");
    assert.equal([...receiver.overlapping], [], "no delivery was being answered twice at once");
  } finally {
    await receiver.close();
  }
});

servers.run();

const restart = suite("a server on PostgreSQL while the database restarts");

restart("requests get 503 while it is down, never a hang or a crash; the server recovers; nothing acknowledged is lost", async () => {
  const cluster = await sharedCluster();
  const database = await cluster.createDatabase();
  const key = await newKey(database.url);
  const server = await serve(database.url);
  const acknowledged: string[] = [];
  const unavailable: string[] = [];
  let phase: "before" | "down" | "after" = "before";
  let stopping = false;
  const unexpected: string[] = [];
  const load = Array.from({ length: 8 }, async (_, worker) => {
    for (let i = 0; !stopping && unexpected.length === 0; i++) {
      try {
        const reply = await call(server.url, "POST", "/api/submission", { key, json: { popupId: "restart", data: { worker, i, phase } } });
        if (reply.status === 201) acknowledged.push(String(reply.json!.submissionId));
        else if (reply.status === 503) unavailable.push(String(reply.json!.message));
        else unexpected.push(`${reply.status}: ${reply.text}`);
      } catch (error) {
        unexpected.push(`no answer: ${String(error)}`);
      }
    }
  });
  /** Waits until `done`, unless a worker met something else than 201 or 503. */
  const until = async (done: () => boolean) => {
    while (!done() && unexpected.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  try {
    await until(() => acknowledged.length >= 50);
    await cluster.stopServer();
    phase = "down";
    const failedBefore = unavailable.length;
    await until(() => unavailable.length >= failedBefore + 20);
    await cluster.startServer();
    phase = "after";
    const ackedBefore = acknowledged.length;
    await until(() => acknowledged.length >= ackedBefore + 50);
  } finally {
    stopping = true;
    await Promise.all(load);
  }
  assert.equal(unexpected.slice(0, 3), [], `every answer is 201 or 503; the server's log:\n${(await (server.process.exitCode === null ? Promise.resolve({ stderr: "" }) : server.exited)).stderr.slice(-3000)}`);
  assert.ok(unavailable.length >= 20);
  for (const message of new Set(unavailable)) assert.match(message, /database/i, `503 says why: ${message}`);
  assert.is(server.process.exitCode, null, "the server is still running");

  const list = await call(server.url, "GET", "/api/submission?popupId=restart&limit=100", { key });
  assert.is(list.status, 200, list.text);
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  try {
    const stored = new Set((await sql`SELECT id FROM submissions WHERE popup_id = 'restart'`).map((row) => String(row.id)));
    assert.equal(acknowledged.filter((id) => !stored.has(id)), [], "every acknowledged create is stored");
  } finally {
    await sql.end({ timeout: 1 });
  }
  const { code, stderr } = await server.stop();
  assert.is(code, 0, stderr);
  await database.drop();
});

restart.run();
stopClusterAfterSuites();
