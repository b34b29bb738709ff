/**
 * Erasure and retention on a store, as tests: the identifier index (or the fallback that walks
 * the account), `deleteSubmissions`, receipts, retention rules, and the retention job with a
 * fake clock. The optional methods are tested through the store's own when it has them and
 * through the fallbacks otherwise.
 */
import { erase, erasureValueHash } from "../privacy/erasure.ts";
import { createRetentionJob, previewRetention } from "../privacy/retention.ts";
import { deleteSubmissions, findSubmissionsByIdentifier, type PrivacyStore, type SubmissionStore } from "../store.ts";
import type { Submission } from "../submission.ts";
import { assert } from "./assert.ts";
import { ACCOUNT, OTHER_ACCOUNT, T0 } from "./fixtures.ts";
import { storeTests, type RegisterTest } from "./suite.ts";

export interface PrivacySuiteOptions<S> {
  test: RegisterTest;
  /**
   * A new, empty store for one test, indexing these identifying fields when given (default
   * `["email"]`); a store without an identifier index ignores them.
   */
  open: (options?: { identifyingFields?: readonly string[] }) => Promise<S>;
}

const DAY = 24 * 60 * 60_000;

function row(data: Submission["data"], overrides: Partial<Submission> = {}): Submission {
  return {
    submissionId: crypto.randomUUID(),
    popupId: "popup_a",
    data,
    domain: "example.com",
    userAgent: "agent",
    device: "desktop",
    status: "pending",
    createdAt: new Date(T0).toISOString(),
    ...overrides,
  };
}

const sorted = (ids: readonly string[]) => [...ids].sort();

/** Registers the tests of erasure and retention with your runner's `test`. */
export function testPrivacyStore<S extends SubmissionStore & PrivacyStore>(options: PrivacySuiteOptions<S>): void {
  const test = storeTests({ test: options.test, open: () => options.open() });
  const testIndexing = (fields: readonly string[]) => storeTests({ test: options.test, open: () => options.open({ identifyingFields: fields }) });

  test("identifiers: an email matches ignoring ASCII case, across popups and every write path, never another account", async (store) => {
    const jane = [
      row({ email: "jane@example.com" }),
      row({ email: "Jane@Example.COM", name: "Jane" }, { popupId: "popup_b" }),
      row({ email: "JANE@EXAMPLE.COM" }, { popupId: "popup_c", status: "completed" }),
    ];
    const imported = row({ email: "jane@EXAMPLE.com" }, { popupId: "popup_d" });
    const once = row({ email: "jAne@example.com" });
    const others = [
      row({ email: "jane@example.org" }),
      row({ email: "jane@example.com " }),
      row({ name: "jane@example.com" }),
      row({ email: ["jane@example.com"] }),
      row({ email: "Jäne@example.com" }),
    ];
    for (const s of [...jane, ...others]) await store.insertSubmission(ACCOUNT, s);
    await store.importSubmissions(ACCOUNT, [imported]);
    await store.insertSubmissionOnce(ACCOUNT, once, { key: "k1", fingerprint: "f", expiresAt: T0 + DAY }, T0);
    await store.insertSubmission(OTHER_ACCOUNT, row({ email: "jane@example.com" }));

    const expected = sorted([...jane, imported, once].map((s) => s.submissionId));
    assert.equal(sorted(await findSubmissionsByIdentifier(store, ACCOUNT, "email", "jane@example.com")), expected);
    assert.equal(sorted(await findSubmissionsByIdentifier(store, ACCOUNT, "email", "JANE@example.COM")), expected);
    assert.equal(await findSubmissionsByIdentifier(store, ACCOUNT, "email", "JÄNE@example.com"), [], "only ASCII letters fold");
    assert.equal(await findSubmissionsByIdentifier(store, ACCOUNT, "email", "nobody@example.com"), []);

    await store.deleteSubmission(ACCOUNT, jane[0]!.submissionId);
    assert.equal(sorted(await findSubmissionsByIdentifier(store, ACCOUNT, "email", "jane@example.com")), expected.filter((id) => id !== jane[0]!.submissionId));
  });

  testIndexing(["email", "phone"])("identifiers: a field other than email matches exactly", async (store) => {
    const exact = row({ phone: "+44 20 7946 0000" }, { popupId: "popup_b" });
    await store.insertSubmission(ACCOUNT, exact);
    await store.insertSubmission(ACCOUNT, row({ phone: "+44 20 7946 000" }));
    await store.insertSubmission(ACCOUNT, row({ phone: 442079460000 }));
    await store.insertSubmission(ACCOUNT, row({ Phone: "+44 20 7946 0000" }));
    assert.equal(await findSubmissionsByIdentifier(store, ACCOUNT, "phone", "+44 20 7946 0000"), [exact.submissionId]);
    const named = row({ phone: "Abc" });
    await store.insertSubmission(ACCOUNT, named);
    assert.equal(await findSubmissionsByIdentifier(store, ACCOUNT, "phone", "abc"), [], "case matters outside email");
    assert.equal(await findSubmissionsByIdentifier(store, ACCOUNT, "phone", "Abc"), [named.submissionId]);
  });

  test("deleteSubmissions (or its fallback): deletes the account's given ids and their idempotency records, skips the rest", async (store) => {
    const rows = [row({ email: "a@example.com" }), row({ email: "b@example.com" }), row({ email: "c@example.com" })];
    for (const s of rows) await store.insertSubmission(ACCOUNT, s);
    const foreign = row({ email: "a@example.com" });
    await store.insertSubmission(OTHER_ACCOUNT, foreign);
    const keyed = row({ email: "d@example.com" });
    await store.insertSubmissionOnce(ACCOUNT, keyed, { key: "k1", fingerprint: "f", expiresAt: T0 + DAY }, T0);

    const asked = [rows[0]!.submissionId, keyed.submissionId, foreign.submissionId, crypto.randomUUID()];
    assert.equal(sorted(await deleteSubmissions(store, ACCOUNT, asked, "erasure")), sorted([rows[0]!.submissionId, keyed.submissionId]));
    assert.is(await store.getSubmission(ACCOUNT, rows[0]!.submissionId), undefined);
    assert.ok(await store.getSubmission(ACCOUNT, rows[1]!.submissionId));
    assert.ok(await store.getSubmission(OTHER_ACCOUNT, foreign.submissionId), "another account's row is untouched");
    assert.equal(await deleteSubmissions(store, ACCOUNT, asked, "erasure"), [], "a second time deletes nothing");
    const again = row({ email: "d@example.com" });
    const retried = await store.insertSubmissionOnce(ACCOUNT, again, { key: "k1", fingerprint: "f", expiresAt: T0 + DAY }, T0);
    assert.ok(retried.inserted, "the deleted submission's idempotency record went with it");
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).total, 3);
  });

  test("erase: deletes exactly the matches, keeps a receipt without the value, and a second erasure finds nothing", async (store) => {
    const jane = [row({ email: "Jane.Doe@Example.com" }), row({ email: "jane.doe@example.com" }, { popupId: "popup_b" })];
    const kept = [row({ email: "john@example.com" }), row({ note: "Jane.Doe@Example.com" })];
    for (const s of [...jane, ...kept]) await store.insertSubmission(ACCOUNT, s);
    const foreign = row({ email: "jane.doe@example.com" });
    await store.insertSubmission(OTHER_ACCOUNT, foreign);
    const value = "JANE.DOE@example.COM";

    const dry = await erase(store, ACCOUNT, { field: "email", value, dryRun: true });
    assert.is(dry.erasureId, null);
    assert.is(dry.matched, 2);
    assert.is(dry.deleted, 0);
    assert.equal(sorted(dry.submissionIds), sorted(jane.map((s) => s.submissionId)));
    assert.is((await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).total, 4, "a dry run deletes nothing");
    assert.equal(await store.listErasureReceipts(ACCOUNT), [], "and keeps no receipt");

    const done = await erase(store, ACCOUNT, { field: "email", value });
    assert.is(done.matched, 2);
    assert.is(done.deleted, 2);
    assert.equal(sorted(done.submissionIds), sorted(jane.map((s) => s.submissionId)));
    const left = (await store.listSubmissions(ACCOUNT, { order: "asc", limit: 10, offset: 0 })).items.map((s) => s.submissionId);
    assert.equal(sorted(left), sorted(kept.map((s) => s.submissionId)));
    assert.ok(await store.getSubmission(OTHER_ACCOUNT, foreign.submissionId), "another account's row is untouched");

    const stored = await store.getErasureReceipt(ACCOUNT, done.erasureId!);
    assert.ok(stored, "the receipt reads back");
    const { valueHash: _valueHash, ...storedRest } = stored!;
    const { dryRun: _dryRun, ...doneRest } = done;
    assert.equal(storedRest, doneRest);
    assert.ok(!JSON.stringify(stored).toLowerCase().includes("jane"), "the receipt holds no trace of the value");
    assert.is(stored!.valueHash, await erasureValueHash(store, "email", "jane.doe@example.com"), "the hash is of the value as compared");
    assert.is(await store.getErasureReceipt(OTHER_ACCOUNT, done.erasureId!), undefined, "receipts are per account");

    const again = await erase(store, ACCOUNT, { field: "email", value });
    assert.equal([again.matched, again.deleted, again.submissionIds], [0, 0, []]);
    const receipts = await store.listErasureReceipts(ACCOUNT);
    assert.equal(receipts.map((r) => r.erasureId), [done.erasureId, again.erasureId]);
    assert.is(receipts[1]!.valueHash, receipts[0]!.valueHash, "the same person's erasures share a hash");
  });

  test("erasureHashKey: made once, then always the same", async (store) => {
    const keys = await Promise.all([store.erasureHashKey(), store.erasureHashKey()]);
    assert.ok(/^[0-9a-f]{64}$/.test(keys[0]), "64 hex digits");
    assert.is(keys[1], keys[0]);
    assert.is(await store.erasureHashKey(), keys[0]);
  });

  test("retention rules: set, read, list every account's, replace, remove", async (store) => {
    assert.equal(await store.getRetentionRules(ACCOUNT), []);
    const rules = [{ olderThanDays: 90, status: "completed" as const }, { popupId: "popup_a", olderThanDays: 30 }];
    await store.setRetentionRules(ACCOUNT, rules);
    await store.setRetentionRules(OTHER_ACCOUNT, [{ olderThanDays: 7 }]);
    assert.equal(await store.getRetentionRules(ACCOUNT), rules);
    const all = await store.listRetentionRules();
    assert.equal(
      all.sort((a, b) => (a.accountId < b.accountId ? -1 : 1)),
      [{ accountId: ACCOUNT, rules }, { accountId: OTHER_ACCOUNT, rules: [{ olderThanDays: 7 }] }],
    );
    await store.setRetentionRules(ACCOUNT, [{ olderThanDays: 1 }]);
    assert.equal(await store.getRetentionRules(ACCOUNT), [{ olderThanDays: 1 }]);
    await store.setRetentionRules(ACCOUNT, []);
    assert.equal(await store.getRetentionRules(ACCOUNT), []);
    assert.equal((await store.listRetentionRules()).map((r) => r.accountId), [OTHER_ACCOUNT]);
  });

  test("retention job: once the clock passes a rule, it deletes exactly what the preview counted", async (store) => {
    // One row a day for 40 days, alternating status, over two popups; the other account alike.
    const days = Array.from({ length: 40 }, (_, day) =>
      row({ email: `u${day}@example.com` }, {
        popupId: day % 2 === 0 ? "popup_a" : "popup_b",
        status: day % 3 === 0 ? "completed" : "pending",
        createdAt: new Date(T0 + day * DAY).toISOString(),
      }));
    await store.importSubmissions(ACCOUNT, days);
    await store.importSubmissions(OTHER_ACCOUNT, days.map((s) => ({ ...s, submissionId: crypto.randomUUID() })));
    // Disjoint rules, so the preview's counts add up to what is deleted.
    const rules = [{ popupId: "popup_a", olderThanDays: 30 }, { popupId: "popup_b", status: "completed" as const, olderThanDays: 10 }];
    await store.setRetentionRules(ACCOUNT, rules);
    let now = T0 + 20 * DAY;
    const job = createRetentionJob(store, { now: () => now, batchSize: 3, pauseMs: 0 });

    assert.equal((await previewRetention(store, ACCOUNT, rules, now)).map((p) => p.matched), [0, 2]);
    now = T0 + 45 * DAY;
    const preview = await previewRetention(store, ACCOUNT, rules, now);
    const expected = days.filter((s, day) =>
      (s.popupId === "popup_a" && day < 15) || (s.popupId === "popup_b" && s.status === "completed" && day < 35));
    assert.equal(preview.map((p) => p.matched), [8, 6]);
    assert.is(preview[0]!.olderThan, new Date(T0 + 15 * DAY).toISOString());

    const run = await job.runOnce();
    assert.is(run.deleted, preview[0]!.matched + preview[1]!.matched);
    const left = (await store.listSubmissions(ACCOUNT, { order: "asc", limit: 100, offset: 0 })).items.map((s) => s.submissionId);
    assert.equal(sorted(left), sorted(days.filter((s) => !expected.includes(s)).map((s) => s.submissionId)));
    assert.is((await store.listSubmissions(OTHER_ACCOUNT, { order: "asc", limit: 1, offset: 0 })).total, 40, "an account without rules keeps everything");
    assert.equal((await previewRetention(store, ACCOUNT, rules, now)).map((p) => p.matched), [0, 0]);
    assert.is((await job.runOnce()).deleted, 0);
  });
}
