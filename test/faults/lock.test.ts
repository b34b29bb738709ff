// Another process holding the database's write lock past formsink's wait: the waiting request
// is answered 503, every other request is answered meanwhile, and the store works again as
// soon as the lock is gone.

import { join } from "node:path";
import * as assert from "uvu/assert";
import { runHere } from "../cli/run.ts";
import { create, holdWriteLock, newKey, serve, suiteWithDir } from "./support.ts";

/** Past the store's wait for the lock (5 s), so that a write waiting for it gives up. */
const HOLD_MS = 6000;

const lock = suiteWithDir("lock held by another process");

lock("a write that waits past the lock's timeout gets 503 with Retry-After; reads and health are answered meanwhile; everything works after the release", async ({ dir }) => {
  const path = join(dir, "live.db");
  const db = `file:${path}`;
  const key = await newKey(db);
  const server = await serve(["--db", db]);
  try {
    const first = (await (await create(server.url, key, "before@example.com")).json()) as { submissionId: string };
    const held = await holdWriteLock(path, HOLD_MS);
    let writeAnswered = false;
    const waiting = create(server.url, key, "during@example.com").finally(() => (writeAnswered = true));
    // While the write waits, the server still answers: health and a list come back first.
    const health = await fetch(`${server.url}/api/health`);
    assert.is(health.status, 200);
    const list = await fetch(`${server.url}/api/submission?popupId=p1`, { headers: { "x-api-key": key } });
    assert.is(list.status, 200);
    assert.is(writeAnswered, false, "health and list were answered only after the waiting write");

    const refused = await waiting;
    assert.is(refused.status, 503);
    assert.is(refused.headers.get("retry-after"), "5");
    assert.match(((await refused.json()) as { message: string }).message, /locked by another process/);
    await held.released;

    const created = await create(server.url, key, "after@example.com");
    assert.is(created.status, 201, await created.clone().text());
    const { submissionId } = (await created.json()) as { submissionId: string };
    const patched = await fetch(`${server.url}/api/submission/${submissionId}`, {
      method: "PATCH",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ status: "completed" }),
    });
    assert.is(patched.status, 200, await patched.clone().text());
    const deleted = await fetch(`${server.url}/api/submission/${first.submissionId}`, { method: "DELETE", headers: { "x-api-key": key } });
    assert.is(deleted.status, 200);
    const after = await fetch(`${server.url}/api/submission?popupId=p1`, { headers: { "x-api-key": key } });
    assert.is(after.status, 200);
    const page = (await after.json()) as { items: { data: { email: string } }[] };
    assert.equal(page.items.map((row) => row.data.email), ["after@example.com"]);
  } finally {
    await server.stop();
  }
});

lock("commands that only read, and a server's start, go on while another process holds the write lock", async ({ dir }) => {
  const path = join(dir, "live.db");
  const db = `file:${path}`;
  const key = await newKey(db);
  const held = await holdWriteLock(path, HOLD_MS);
  try {
    const listed = await runHere(["keys", "list", "--db", db]);
    assert.is(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /acme/);
    const exported = await runHere(["export", "--account", "acme", "--db", db]);
    assert.is(exported.code, 0, exported.stderr);
    const server = await serve(["--db", db]);
    try {
      const list = await fetch(`${server.url}/api/submission?popupId=p1`, { headers: { "x-api-key": key } });
      assert.is(list.status, 200);
    } finally {
      await server.stop();
    }
  } finally {
    held.process.kill("SIGKILL");
  }
});

lock.run();
