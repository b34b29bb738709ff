/** The `KeyStore` contract (accounts and API keys) as tests. */
import type { ApiKeyRecord, KeyStore } from "../store.ts";
import { assert } from "./assert.ts";
import { storeTests, type StoreSuiteOptions } from "./suite.ts";

function apiKeyRecord(id: string, accountId: string, createdAt: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return { id, accountId, kind: "secret", hash: "ab".repeat(32), domains: [], createdAt, revokedAt: null, ...overrides };
}

/** Registers the tests of `KeyStore` with your runner's `test`. */
export function testKeyStore<S extends KeyStore & { close(): Promise<void> }>(options: StoreSuiteOptions<S>): void {
  const test = storeTests(options);

  test("ensureAccount: one account per name, created once even when asked at once", async (store) => {
    const first = await store.ensureAccount("acme");
    assert.is(first.name, "acme");
    assert.ok(first.id.length > 0);
    assert.ok(!Number.isNaN(Date.parse(first.createdAt)));
    assert.equal(await store.ensureAccount("acme"), first);
    const other = await store.ensureAccount("globex");
    assert.is.not(other.id, first.id);
    const racing = await Promise.all(Array.from({ length: 8 }, () => store.ensureAccount("initech")));
    assert.is(new Set(racing.map((a) => a.id)).size, 1);
  });

  test("findAccount: the account of that name, without creating one", async (store) => {
    assert.is(await store.findAccount("acme"), undefined);
    assert.is(await store.findAccount("acme"), undefined, "looking did not create it");
    const acme = await store.ensureAccount("acme");
    assert.equal(await store.findAccount("acme"), acme);
    assert.is(await store.findAccount("ACME"), undefined);
  });

  test("api keys: insert, find by id, list (no hash, filtered by account, in creation order), revoke", async (store) => {
    const acme = await store.ensureAccount("acme");
    const globex = await store.ensureAccount("globex");
    const first = apiKeyRecord("key000000001", acme.id, "2025-07-12T10:00:00.000Z");
    const second = apiKeyRecord("key000000002", globex.id, "2025-07-12T11:00:00.000Z", {
      kind: "publishable",
      domains: ["example.com", "shop.example.com:8443"],
      hash: "cd".repeat(32),
    });
    const third = apiKeyRecord("key000000003", acme.id, "2025-07-12T09:00:00.000Z");
    for (const key of [first, second, third]) await store.insertApiKey(key);

    assert.equal(await store.findApiKey("key000000002"), second);
    assert.is(await store.findApiKey("nokey0000000"), undefined);

    const all = await store.listApiKeys();
    assert.equal(all.map((k) => k.id), ["key000000003", "key000000001", "key000000002"]);
    assert.ok(all.every((k) => !("hash" in k)), "a listing never carries the hash");
    assert.equal(all[2], { ...(({ hash: _hash, ...rest }) => rest)(second), accountName: "globex" });
    assert.equal((await store.listApiKeys({ accountName: "acme" })).map((k) => k.id), ["key000000003", "key000000001"]);
    assert.equal(await store.listApiKeys({ accountName: "nobody" }), []);

    const revoked = await store.revokeApiKey("key000000001", "2025-07-13T00:00:00.000Z");
    assert.equal(revoked, { ...first, revokedAt: "2025-07-13T00:00:00.000Z" });
    const again = await store.revokeApiKey("key000000001", "2025-07-14T00:00:00.000Z");
    assert.is(again!.revokedAt, "2025-07-13T00:00:00.000Z", "the first revocation time is kept");
    assert.is((await store.findApiKey("key000000001"))!.revokedAt, "2025-07-13T00:00:00.000Z");
    assert.is((await store.findApiKey("key000000003"))!.revokedAt, null, "only the named key is revoked");
    assert.is(await store.revokeApiKey("nokey0000000", "2025-07-13T00:00:00.000Z"), undefined);
  });

  test("api keys: a second key with the same id fails and keeps the first", async (store) => {
    const acme = await store.ensureAccount("acme");
    const key = apiKeyRecord("dupkey000001", acme.id, "2025-07-12T10:00:00.000Z");
    await store.insertApiKey(key);
    let failed = false;
    try {
      await store.insertApiKey({ ...key, hash: "ef".repeat(32) });
    } catch {
      failed = true;
    }
    assert.ok(failed, "duplicate key id must throw");
    assert.equal(await store.findApiKey(key.id), key);
  });
}
