/**
 * The reads of one turn in one snapshot (a libSQL file's `shareReads`, started by the key
 * lookup of a turn with three or more in src/stores/sql/per-turn.ts): the reads a turn's
 * answers lead to share the snapshot the key lookup took, and whatever runs after the turn
 * (another request, a timer, the next turn's callbacks) reads the database as it is then.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import type { Submission } from "../../src/submission.ts";

const test = suite("libSQL file: the reads of a turn share one snapshot");

const SUBMISSION: Submission = {
  submissionId: "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c10",
  popupId: "popup",
  data: { email: "visitor@example.com" },
  domain: "example.com",
  userAgent: "Mozilla/5.0",
  device: "desktop",
  status: "pending",
  createdAt: "2025-07-12T10:30:00.000Z",
};

/** A store on a new file with one key and one submission, and another connection to the file. */
async function setUp() {
  const dir = mkdtempSync(join(tmpdir(), "formsink-shared-reads-"));
  const path = join(dir, "shared.db");
  const connection = openLibsqlFile(path);
  const store = await createSqlStore(connection.driver, connection.close);
  const { record } = await createApiKey(store, { account: "acme" });
  await store.insertSubmission(record.accountId, SUBMISSION);
  const other = new Database(path);
  const completeElsewhere = () => other.prepare("UPDATE submissions SET status = 'completed' WHERE id = ?").run([SUBMISSION.submissionId]);
  const statusNow = async () => (await store.getSubmission(record.accountId, SUBMISSION.submissionId))?.status;
  return {
    store,
    driver: connection.driver,
    keyId: record.id,
    completeElsewhere,
    statusNow,
    async tearDown() {
      other.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Three requests' key lookups in one turn; resolves with the first's record. */
const threeLookups = (store: { findApiKey(id: string): Promise<unknown> }, keyId: string) =>
  Promise.all([store.findApiKey(keyId), store.findApiKey(keyId), store.findApiKey(keyId)]).then(([first]) => first);

test("a read the turn's key lookup leads to is in its snapshot; the next turn's reads see later commits", async () => {
  const { store, keyId, completeElsewhere, statusNow, tearDown } = await setUp();
  try {
    const inTurn = await threeLookups(store, keyId).then(async () => {
      completeElsewhere();
      return statusNow();
    });
    // Committed after the turn's snapshot was taken: not in it.
    assert.is(inTurn, "pending");
    await nextTurn();
    assert.is(await statusNow(), "completed");
  } finally {
    await tearDown();
  }
});

test("a commit before the turn's key lookup is in the turn's snapshot", async () => {
  const { store, keyId, completeElsewhere, statusNow, tearDown } = await setUp();
  try {
    completeElsewhere();
    const inTurn = await threeLookups(store, keyId).then(() => statusNow());
    assert.is(inTurn, "completed");
  } finally {
    await tearDown();
  }
});

test("reads after the turn, from a timer or a later turn's lookup, are not in its snapshot", async () => {
  const { store, keyId, completeElsewhere, statusNow, tearDown } = await setUp();
  try {
    const [fromTimer, fromNextLookup] = await threeLookups(store, keyId).then(() => {
      completeElsewhere();
      return Promise.all([
        new Promise((resolve) => setTimeout(() => resolve(statusNow()), 0)),
        threeLookups(store, keyId).then(() => statusNow()),
      ]);
    });
    assert.is(fromTimer, "completed");
    assert.is(fromNextLookup, "completed");
  } finally {
    await tearDown();
  }
});

test("within the turn's snapshot, a read batch runs in it and a statement refused inside a transaction ends it first", async () => {
  const { store, driver, keyId, completeElsewhere, statusNow, tearDown } = await setUp();
  try {
    const [counted, afterVacuum] = await threeLookups(store, keyId).then(async () => {
      completeElsewhere();
      const [rows] = await driver.batch([{ sql: "SELECT status FROM submissions WHERE id = ?", args: [SUBMISSION.submissionId] }], "read");
      await driver.execute({ sql: "VACUUM" });
      return [rows!.rows[0]!.status, await statusNow()];
    });
    assert.is(counted, "pending");
    assert.is(afterVacuum, "completed");
  } finally {
    await tearDown();
  }
});

test("a turn with two key lookups shares no snapshot: each read sees what was committed before it", async () => {
  const { store, keyId, completeElsewhere, statusNow, tearDown } = await setUp();
  try {
    const inTurn = await Promise.all([store.findApiKey(keyId), store.findApiKey(keyId)]).then(async () => {
      completeElsewhere();
      return statusNow();
    });
    assert.is(inTurn, "completed");
  } finally {
    await tearDown();
  }
});

test("a write of the store, asked in the turn, is seen by the reads after it", async () => {
  const { store, keyId, statusNow, tearDown } = await setUp();
  try {
    const account = (await store.findApiKey(keyId))!.accountId;
    const after = await threeLookups(store, keyId).then(async () => {
      await store.setSubmissionStatus(account, SUBMISSION.submissionId, "completed");
      return statusNow();
    });
    assert.is(after, "completed");
  } finally {
    await tearDown();
  }
});

test.run();
