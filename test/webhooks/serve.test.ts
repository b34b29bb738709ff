/**
 * `formsink serve` delivering webhooks as a real process on a libSQL file, from its dispatcher's
 * own thread (in Node, Bun and Deno): deliveries go out as changes commit; a server killed with
 * SIGKILL while deliveries are in flight loses none of them once it is back; two servers on one
 * database never send one delivery at once.
 */
import * as assert from "uvu/assert";
import { newKey, serve, suiteWithDir } from "../faults/support.ts";
import { type Receiver, startReceiver, verifyDelivery } from "../support/webhook-receiver.ts";

/** The shortest lease serve takes: a killed server's deliveries go out again after this long. */
const LEASE_SECONDS = "16";

async function addWebhook(serverUrl: string, key: string, url: string): Promise<{ webhookId: string; secret: string }> {
  const answer = await fetch(`${serverUrl}/api/webhooks`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ url }),
  });
  assert.is(answer.status, 201, await answer.clone().text());
  return (await answer.json()) as { webhookId: string; secret: string };
}

async function createSubmission(serverUrl: string, key: string, i: number): Promise<void> {
  const answer = await fetch(`${serverUrl}/api/submission`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ popupId: "p1", data: { email: `lead${i}@example.com` } }),
  });
  assert.is(answer.status, 201, await answer.clone().text());
}

/** Every event id the server's feed holds. */
async function eventIds(serverUrl: string, key: string): Promise<string[]> {
  const answer = await fetch(`${serverUrl}/api/events?limit=1000`, { headers: { "x-api-key": key } });
  return ((await answer.json()) as { items: { id: string }[] }).items.map((event) => event.id);
}

/** Resolves once `done()` holds; fails naming `what` if it does not within `seconds`. */
async function until(done: () => boolean, what: string, seconds = 90): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What serve logs when its dispatcher's thread did not start and deliveries go out beside the handler. */
const NO_THREAD = /their own thread did not start/;
/** What serve logs when it starts that thread: once the database has an enabled endpoint. */
const THREAD_STARTS = /webhook deliveries start: an endpoint is enabled/;

const missing = (receiver: Receiver, ids: readonly string[]) => {
  const got = new Set(receiver.received.map((d) => d.id));
  return ids.filter((id) => !got.has(id));
};

const test = suiteWithDir("formsink serve: webhook deliveries");

for (const runtime of ["node", "bun", "deno"] as const) {
  test(`${runtime}: each change is delivered as it commits, woken by it, from the dispatcher's thread, signed so that standardwebhooks verifies it`, async ({ dir }) => {
    const db = `file:${dir}/serve.db`;
    const key = await newKey(db);
    const receiver = await startReceiver();
    // Polling once an hour: within the test, only the changes' wakes can bring deliveries out.
    const server = await serve(["--db", db, "--allow-private-webhooks", "--webhook-poll", "3600"], { runtime });
    try {
      const { secret } = await addWebhook(server.url, key, `${receiver.url}/hooks`);
      await createSubmission(server.url, key, 1);
      await until(() => receiver.received.length === 1, "the first delivery");
      const event = verifyDelivery(secret, receiver.received[0]!) as { type: string; data: { data: { email: string } } };
      assert.equal([event.type, event.data.data.email], ["submission.created", "lead1@example.com"]);
      for (const n of [2, 3]) {
        // A pause first, so that the change usually finds the thread caught up and waiting.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await createSubmission(server.url, key, n);
        await until(() => receiver.received.length === n, `delivery ${n}, woken by its change`);
      }
    } finally {
      const { stderr, code } = await server.stop();
      await receiver.close();
      assert.is(code, 0, stderr);
      assert.match(stderr, THREAD_STARTS);
      assert.not.match(stderr, NO_THREAD);
    }
  });
}

test("a server whose database has no enabled endpoint starts no delivery thread; an endpoint added, or enabled by another process, starts it", async ({ dir }) => {
  const db = `file:${dir}/lazy.db`;
  const key = await newKey(db);
  const receiver = await startReceiver();
  try {
    const idle = await serve(["--db", db, "--allow-private-webhooks"]);
    await createSubmission(idle.url, key, 1);
    const { webhookId } = await addWebhook(idle.url, key, `${receiver.url}/hooks`);
    const disabled = await fetch(`${idle.url}/api/webhooks/${webhookId}`, {
      method: "PATCH",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ enabled: false }),
    });
    assert.is(disabled.status, 200, await disabled.text());
    await createSubmission(idle.url, key, 2);
    const first = await idle.stop();
    assert.is(first.code, 0, first.stderr);
    assert.is(first.stderr.match(new RegExp(THREAD_STARTS, "g"))?.length, 1, "started by the endpoint's creation, once");

    // The endpoint stays disabled: a server started now has nothing to send.
    const quiet = await serve(["--db", db, "--allow-private-webhooks"]);
    await createSubmission(quiet.url, key, 3);
    const second = await quiet.stop();
    assert.is(second.code, 0, second.stderr);
    assert.not.match(second.stderr, THREAD_STARTS);

    // Enabled by another process (the CLI, another server): found without a change of this server's.
    const enabler = await serve(["--db", db, "--allow-private-webhooks"]);
    const enabled = await fetch(`${enabler.url}/api/webhooks/${webhookId}`, {
      method: "PATCH",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ enabled: true }),
    });
    assert.is(enabled.status, 200, await enabled.text());
    assert.is((await enabler.stop()).code, 0);
    const busy = await serve(["--db", db, "--allow-private-webhooks"]);
    await createSubmission(busy.url, key, 4);
    await until(() => receiver.received.length === 1, "the delivery of the lead created once the endpoint was enabled again");
    const third = await busy.stop();
    assert.is(third.code, 0, third.stderr);
    assert.match(third.stderr, THREAD_STARTS);
    assert.not.match(third.stderr, NO_THREAD);
  } finally {
    await receiver.close();
  }
});

test("a server killed while deliveries are in flight delivers every event once it is back (duplicates allowed, losses not)", async ({ dir }) => {
  const db = `file:${dir}/crash.db`;
  const key = await newKey(db);
  const receiver = await startReceiver();
  receiver.delayMs = 100;
  const args = ["--db", db, "--allow-private-webhooks", "--webhook-lease", LEASE_SECONDS];
  let server = await serve(args);
  try {
    await addWebhook(server.url, key, `${receiver.url}/hooks`);
    for (let i = 0; i < 40; i++) await createSubmission(server.url, key, i);
    const events = await eventIds(server.url, key);
    await until(() => receiver.received.length >= 3, "deliveries under way");
    const killed = await server.stop("SIGKILL");
    assert.not.match(killed.stderr, NO_THREAD);
    const beforeRestart = missing(receiver, events).length;
    assert.ok(beforeRestart > 0, "the kill came before every event was delivered");

    server = await serve(args);
    await until(() => missing(receiver, events).length === 0, `every event delivered after the restart (${beforeRestart} were not before it)`);
    assert.equal(missing(receiver, events), []);
  } finally {
    await server.stop();
    await receiver.close();
  }
});

test("--endpoint-concurrency sets how many of one endpoint's first attempts are under way at once", async ({ dir }) => {
  const db = `file:${dir}/window.db`;
  const key = await newKey(db);
  const receiver = await startReceiver();
  receiver.delayMs = 100;
  const server = await serve(["--db", db, "--allow-private-webhooks", "--endpoint-concurrency", "2"]);
  try {
    await addWebhook(server.url, key, `${receiver.url}/hooks`);
    await Promise.all(Array.from({ length: 12 }, (_, i) => createSubmission(server.url, key, i)));
    await until(() => receiver.received.length >= 12, "every delivery");
    assert.is(Math.max(...receiver.answeringAtOnce), 2, "two at once, never more");
  } finally {
    await server.stop();
    await receiver.close();
  }
});

test("two servers on one database never send one delivery at once, and between them send every event", async ({ dir }) => {
  const db = `file:${dir}/shared.db`;
  const key = await newKey(db);
  const receiver = await startReceiver();
  receiver.delayMs = 20;
  const args = ["--db", db, "--allow-private-webhooks", "--webhook-lease", LEASE_SECONDS];
  const [one, two] = await Promise.all([serve(args), serve(args)]);
  try {
    await addWebhook(one.url, key, `${receiver.url}/hooks`);
    await Promise.all([one, two].map(async (server, s) => {
      for (let i = 0; i < 30; i++) await createSubmission(server.url, key, s * 100 + i);
    }));
    const events = await eventIds(one.url, key);
    assert.is(events.length, 60);
    await until(() => missing(receiver, events).length === 0, "every event delivered");
    assert.equal([...receiver.overlapping], [], "no delivery was being answered twice at once");
  } finally {
    await Promise.all([one.stop(), two.stop()]);
    await receiver.close();
  }
});

test.run();
