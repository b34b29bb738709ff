// The hourly prune of the change log on a libSQL file: a run with nothing old enough neither
// waits for nor holds the write lock, so it never stands in the way of another writer of the
// file; a run with old events still drops exactly them, batch after batch.

import Database from "libsql";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { CompleteStore } from "../../src/store.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { ACCOUNT, seedRows } from "../../src/testing/fixtures.ts";
import { readAll } from "../../src/testing/event-reading.ts";
import { within } from "../support/within.ts";

const test = suite("SQL store: pruning the change log");

/**
 * A guard against a hang only: a prune that needed the write lock would sit out the store's wait
 * for another process's lock and then fail as busy, since the other process keeps it throughout.
 */
const HANG_GUARD_MS = 30_000;

async function withFileStore(work: (store: CompleteStore, path: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "formsink-prune-"));
  const path = join(dir, "test.db");
  const store = await createLibsqlStore({ url: `file:${path}` });
  try {
    await work(store, path);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a prune with nothing old enough succeeds while another process holds the write lock throughout, and drops nothing", async () => {
  await withFileStore(async (store, path) => {
    const [first, second] = seedRows(2);
    await store.insertSubmission(ACCOUNT, first!);
    await store.insertSubmission(ACCOUNT, second!);
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      assert.is(await within(store.pruneEvents(Date.now() - 60_000), HANG_GUARD_MS, "the prune"), 0);
    } finally {
      other.exec("COMMIT");
      other.close();
    }
    assert.is((await readAll(store, ACCOUNT)).events.length, 2);
  });
});

test("a prune drops exactly the events older than its cut-off, over several batches, and the next run drops none", async () => {
  await withFileStore(async (store) => {
    const old = seedRows(12_345);
    await store.importSubmissions(ACCOUNT, old);
    const before = Date.now() + 1;
    while (Date.now() <= before) await new Promise((resolve) => setTimeout(resolve, 2));
    const [fresh] = seedRows(1);
    await store.insertSubmission(ACCOUNT, fresh!);

    assert.is(await store.pruneEvents(before), old.length);
    assert.is(await store.pruneEvents(before), 0);
    const kept = (await readAll(store, ACCOUNT)).events;
    assert.equal(kept.map((event) => event.data.submissionId), [fresh!.submissionId]);
  });
});

test.run();
