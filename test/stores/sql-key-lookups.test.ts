/**
 * API key lookups of the SQL store (src/stores/sql/per-turn.ts): the lookups of one key asked
 * during one turn of the event loop share one statement, and every lookup is read by a
 * statement that started after it was asked, so a revocation committed before a request is
 * seen by that request.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey, revokeApiKey } from "../../src/auth/keys.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { openLibsqlFile } from "../../src/stores/libsql/file.ts";
import type { SqlDriver } from "../../src/stores/sql/driver.ts";
import { createSqlStore } from "../../src/stores/sql/store.ts";
import { readPerTurn } from "../../src/stores/sql/per-turn.ts";

const test = suite("SQL store: API key lookups per turn");

/** A store over `path` (:memory: or a file) that counts the statements reading api_keys. */
async function countingStore(path = ":memory:") {
  const connection = openLibsqlFile(path);
  const keyReads = { count: 0 };
  const { changeVersion } = connection.driver;
  const driver: SqlDriver = {
    execute: (statement) => {
      if (/FROM api_keys WHERE id = \?/.test(statement.sql)) keyReads.count++;
      return connection.driver.execute(statement);
    },
    batch: (statements, mode) => connection.driver.batch(statements, mode),
    ...(changeVersion && { changeVersion }),
  };
  return { store: await createSqlStore(driver, connection.close), keyReads };
}

test("lookups of one key asked in one turn share one statement; each key has its own; an unknown key is undefined", async () => {
  const { store, keyReads } = await countingStore();
  try {
    const first = await createApiKey(store, { account: "acme" });
    const second = await createApiKey(store, { account: "other" });
    const found = await Promise.all([
      ...Array.from({ length: 10 }, () => store.findApiKey(first.record.id)),
      store.findApiKey(second.record.id),
      store.findApiKey("nosuchkeyid0"),
    ]);
    assert.is(keyReads.count, 3);
    assert.ok(found.slice(0, 10).every((record) => record?.id === first.record.id && record.revokedAt === null));
    assert.is(found[10]?.accountId, second.record.accountId);
    assert.is(found[11], undefined);
    // The next turn reads again.
    assert.is((await store.findApiKey(first.record.id))?.id, first.record.id);
    assert.is(keyReads.count, 4);
  } finally {
    await store.close();
  }
});

test("a lookup asked after another connection revoked the key sees the revocation", async () => {
  const dir = mkdtempSync(join(tmpdir(), "formsink-key-lookups-"));
  const url = `file:${join(dir, "keys.db")}`;
  const serving = await createLibsqlStore({ url });
  const other = await createLibsqlStore({ url });
  try {
    const { record } = await createApiKey(serving, { account: "acme" });
    const live = await Promise.all([serving.findApiKey(record.id), serving.findApiKey(record.id)]);
    assert.equal(live.map((found) => found?.revokedAt), [null, null]);
    assert.ok(await revokeApiKey(other, record.id));
    const after = await Promise.all([serving.findApiKey(record.id), serving.findApiKey(record.id)]);
    assert.ok(after.every((found) => found?.revokedAt));
  } finally {
    await serving.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a file's key is read again after any commit, by this store or another connection, and kept while nothing changed", async () => {
  const dir = mkdtempSync(join(tmpdir(), "formsink-key-lookups-"));
  const path = join(dir, "keys.db");
  const { store, keyReads } = await countingStore(path);
  const other = new Database(path);
  try {
    const first = await createApiKey(store, { account: "acme" });
    const second = await createApiKey(store, { account: "acme" });
    assert.is((await store.findApiKey(first.record.id))?.revokedAt, null);
    const reads = keyReads.count;
    // Nothing committed since: later turns answer from the record read before.
    for (let turn = 0; turn < 3; turn++) assert.is((await store.findApiKey(first.record.id))?.revokedAt, null);
    assert.is(keyReads.count, reads);
    // Revoked through this store: the next lookup reads it again and sees it.
    assert.ok(await revokeApiKey(store, second.record.id));
    assert.ok((await store.findApiKey(second.record.id))?.revokedAt);
    // Revoked by another connection to the file, as an operator's sqlite3 session would.
    assert.is((await store.findApiKey(first.record.id))?.revokedAt, null);
    other.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").run(["2026-01-01T00:00:00.000Z", first.record.id]);
    assert.is((await store.findApiKey(first.record.id))?.revokedAt, "2026-01-01T00:00:00.000Z");
    // Read once per commit, not once per lookup.
    const reread = keyReads.count;
    other.prepare("UPDATE api_keys SET revoked_at = NULL WHERE id = ?").run([first.record.id]);
    assert.is((await store.findApiKey(first.record.id))?.revokedAt, null);
    assert.is((await store.findApiKey(first.record.id))?.revokedAt, null);
    assert.is(keyReads.count, reread + 1);
  } finally {
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a failed read fails the lookups that shared it, and the next turn reads again", async () => {
  let fail = true;
  let throwAtOnce = true;
  const reads: string[] = [];
  const lookup = readPerTurn((key: string) => {
    reads.push(key);
    // A read that throws before it returns a promise fails its lookups the same way.
    if (throwAtOnce) {
      throwAtOnce = false;
      throw new Error("statement refused");
    }
    if (fail) {
      fail = false;
      return Promise.reject(new Error("connection lost"));
    }
    return Promise.resolve(key.toUpperCase());
  });
  const outcome = (lookups: Promise<string>[]) => Promise.all(lookups.map((p) => p.then((value) => value, (error: Error) => error.message)));
  assert.equal(await outcome([lookup("a"), lookup("a")]), ["statement refused", "statement refused"]);
  assert.equal(await outcome([lookup("a"), lookup("b")]), ["connection lost", "B"]);
  assert.is(await lookup("a"), "A");
  assert.equal(reads, ["a", "a", "b", "a"]);
});

test.run();
