// `kill -9` of the server in the middle of creates, status changes and deletes, a few times
// over: after each restart every acknowledged write is there, every acknowledged delete is
// gone, the totals the API gives equal the rows, and the file passes SQLite's integrity check.

import { join } from "node:path";
import Database from "libsql";
import * as assert from "uvu/assert";
import { create, newKey, serve, suiteWithDir } from "./support.ts";

const ROUNDS = 3;
const WORKERS = 6;
/** How long each round's load runs before the kill. */
const LOAD_MS = 400;

const crash = suiteWithDir("SIGKILL under mixed load");

crash("every acknowledged create, status change and delete survives a kill -9", async ({ dir }) => {
  const path = join(dir, "live.db");
  const key = await newKey(`file:${path}`);
  const created = new Set<string>();
  const completed = new Set<string>();
  const deleted = new Set<string>();
  // Sent, but cut off by the kill before an answer: either outcome is right.
  const deleteSent = new Set<string>();
  const completeSent = new Set<string>();
  for (let round = 0; round < ROUNDS; round++) {
    const server = await serve(["--db", `file:${path}`]);
    // A create and a status change answered before the load: every round has acknowledged
    // writes of both kinds that the kill must not lose.
    const first = await create(server.url, key, `r${round}-first@example.com`);
    assert.is(first.status, 201);
    const firstId = ((await first.json()) as { submissionId: string }).submissionId;
    created.add(firstId);
    completeSent.add(firstId);
    const firstPatch = await fetch(`${server.url}/api/submission/${firstId}`, {
      method: "PATCH",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ status: "completed" }),
    });
    assert.is(firstPatch.status, 200);
    let killed = false;
    const worker = async (w: number) => {
      for (let i = 0; !killed; i++) {
        try {
          const answer = await create(server.url, key, `r${round}w${w}i${i}@example.com`);
          if (answer.status !== 201) continue;
          const { submissionId } = (await answer.json()) as { submissionId: string };
          created.add(submissionId);
          if (i % 3 === 1) {
            completeSent.add(submissionId);
            const patched = await fetch(`${server.url}/api/submission/${submissionId}`, {
              method: "PATCH",
              headers: { "x-api-key": key, "content-type": "application/json" },
              body: JSON.stringify({ status: "completed" }),
            });
            if (patched.status === 200) completed.add(submissionId);
          } else if (i % 3 === 2) {
            deleteSent.add(submissionId);
            const gone = await fetch(`${server.url}/api/submission/${submissionId}`, { method: "DELETE", headers: { "x-api-key": key } });
            if (gone.status === 200) deleted.add(submissionId);
          }
        } catch {
          // The kill cuts requests off: whatever had no answer may or may not have happened.
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
    await server.stop("SIGKILL");
    killed = true;
    await load;
  }
  assert.ok(deleted.size > 0 && completed.size > 0, `the load did too little: ${created.size} created, ${completed.size} completed, ${deleted.size} deleted`);

  const server = await serve(["--db", `file:${path}`]);
  let total: number;
  try {
    const answer = await fetch(`${server.url}/api/submission?popupId=p1&limit=1`, { headers: { "x-api-key": key } });
    total = ((await answer.json()) as { total: number }).total;
  } finally {
    await server.stop();
  }
  const db = new Database(path);
  try {
    const rows = new Map((db.prepare("SELECT id, status FROM submissions").all() as { id: string; status: string }[]).map((row) => [row.id, row.status]));
    for (const id of created) {
      if (deleted.has(id)) assert.not.ok(rows.has(id), `deleted ${id} is back`);
      else if (!deleteSent.has(id)) {
        assert.ok(rows.has(id), `created ${id} is lost`);
        if (completed.has(id)) assert.is(rows.get(id), "completed", `the status change of ${id} is lost`);
        else if (!completeSent.has(id)) assert.is(rows.get(id), "pending", `${id} changed with no request to change it`);
      }
    }
    assert.is(total, rows.size, "the API's total equals the rows");
    assert.equal(db.prepare("PRAGMA integrity_check").all(), [{ integrity_check: "ok" }]);
  } finally {
    db.close();
  }
});

crash.run();
