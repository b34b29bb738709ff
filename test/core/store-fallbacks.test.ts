/**
 * The core's fallbacks for a store without the optional fast paths: they walk every match a
 * page at a time, across page boundaries, and find what the store's own paths find.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { findSubmissionsByIdentifier, listDataKeys, type SubmissionStore } from "../../src/store.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import type { Submission } from "../../src/submission.ts";

const ACCOUNT = "acct";

/** 2,500 rows: more than two of the fallbacks' pages. Every 500th is Jane's, in varying case. */
function rows(): Submission[] {
  return Array.from({ length: 2500 }, (_, i): Submission => ({
    submissionId: crypto.randomUUID(),
    popupId: `popup_${i % 3}`,
    data: i % 500 === 7 ? { email: i % 1000 === 7 ? "Jane@Example.com" : "jane@example.com", [`key_${i}`]: i } : { email: `user${i}@example.com` },
    domain: "example.com",
    userAgent: "ua",
    device: "desktop",
    status: "pending",
    createdAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
  }));
}

test("without the fast paths, erasure's lookup and the CSV columns walk every page and agree with the store's own", async () => {
  const store = createMemoryStore();
  await store.importSubmissions(ACCOUNT, rows());
  const { findSubmissionsByIdentifier: _find, listDataKeys: _keys, ...core } = store;
  const bare: SubmissionStore = core;
  const jane = await findSubmissionsByIdentifier(bare, ACCOUNT, "email", "JANE@example.com");
  assert.is(jane.length, 5);
  assert.equal([...jane].sort(), [...(await store.findSubmissionsByIdentifier(ACCOUNT, "email", "jane@example.com"))].sort());
  for (const filter of [{}, { popupId: "popup_1" }]) {
    assert.equal(await listDataKeys(bare, ACCOUNT, filter, 100), await store.listDataKeys(ACCOUNT, filter, 100));
  }
  await store.close();
});

test.run();
