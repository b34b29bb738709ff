import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { constantTimeEqual, generateApiKey, hashApiKey, parseApiKey } from "../../src/auth/api-key.ts";
import { authenticateWithStore } from "../../src/auth/store-authenticate.ts";
import { type CreatedApiKey, createApiKey, revokeApiKey } from "../../src/auth/keys.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";

test("keys carry a readable kind prefix, an id and a long random secret", async () => {
  const secret = await generateApiKey("secret");
  assert.match(secret.key, /^fs_sk_[0-9A-Za-z]{12}_[0-9A-Za-z]{40}$/);
  assert.ok(secret.key.startsWith(`${secret.prefix}_`));
  assert.equal(parseApiKey(secret.key), { kind: "secret", id: secret.id });
  const publishable = await generateApiKey("publishable");
  assert.match(publishable.key, /^fs_pk_/);
  assert.equal(parseApiKey(publishable.key), { kind: "publishable", id: publishable.id });
  assert.is.not(secret.key, (await generateApiKey("secret")).key);
});

test("only the hash is stored, and it is the SHA-256 of the key", async () => {
  const store = createMemoryStore();
  const { key, record } = await createApiKey(store, { account: "acme" });
  assert.is(record.hash, await hashApiKey(key));
  assert.match(record.hash, /^[0-9a-f]{64}$/);
  assert.not.ok(JSON.stringify(await store.findApiKey(record.id)).includes(key));
  assert.is(await hashApiKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("parseApiKey refuses text that is not a whole key", () => {
  for (const text of ["", "fs_sk_short_x", "sk_live_abc", "fs_xx_AAAAAAAAAAAA_" + "a".repeat(40), "fs_sk_AAAAAAAAAAAA_" + "a".repeat(41)]) {
    assert.is(parseApiKey(text), undefined, text);
  }
});

test("constantTimeEqual compares whole strings", () => {
  assert.ok(constantTimeEqual("abc", "abc"));
  assert.not.ok(constantTimeEqual("abc", "abd"));
  assert.not.ok(constantTimeEqual("abc", "ab"));
  assert.not.ok(constantTimeEqual("", "a"));
});

test("the store authenticator accepts a live key and refuses wrong, altered, other-kind and revoked ones", async () => {
  const store = createMemoryStore();
  const authenticate = authenticateWithStore(store);
  const request = new Request("http://formsink.test/");
  const { key, record } = await createApiKey(store, { account: "acme" });
  assert.equal(await authenticate(key, request), { accountId: record.accountId, kind: "secret", domains: [], keyId: record.id });

  const altered = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a");
  assert.is(await authenticate(altered, request), undefined);
  assert.is(await authenticate(key.replace("fs_sk_", "fs_pk_"), request), undefined);
  assert.is(await authenticate("not a key", request), undefined);

  await revokeApiKey(store, `fs_sk_${record.id}`);
  assert.is(await authenticate(key, request), undefined);
});

test("the store authenticator hashes a key once, and still refuses altered and revoked keys at once", async () => {
  const store = createMemoryStore();
  const authenticate = authenticateWithStore(store);
  const request = new Request("http://formsink.test/");
  const { key, record } = await createApiKey(store, { account: "acme" });
  const digest = crypto.subtle.digest;
  let digests = 0;
  crypto.subtle.digest = function (...args: Parameters<typeof digest>) {
    digests++;
    return digest.apply(this, args);
  };
  try {
    for (let i = 0; i < 3; i++) assert.is((await authenticate(key, request))?.keyId, record.id);
    assert.is(digests, 1, "the key's hash was computed once");
    // the same id with another secret is not the remembered key: hashed, and refused
    const altered = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a");
    assert.is(await authenticate(altered, request), undefined);
    assert.is(await authenticate(altered, request), undefined);
    assert.is(digests, 3, "a wrong key is hashed every time");
    assert.is((await authenticate(key, request))?.keyId, record.id);
    await revokeApiKey(store, record.id);
    assert.is(await authenticate(key, request), undefined);
  } finally {
    crypto.subtle.digest = digest;
  }
});

test("a key revoked through another connection to the same database is refused on the next request", async () => {
  const dir = mkdtempSync(join(tmpdir(), "formsink-revoke-"));
  const url = `file:${join(dir, "keys.db")}`;
  const serving = await createLibsqlStore({ url });
  const other = await createLibsqlStore({ url });
  try {
    const authenticate = authenticateWithStore(serving);
    const request = new Request("http://formsink.test/");
    const { key, record } = await createApiKey(serving, { account: "acme" });
    assert.is((await authenticate(key, request))?.keyId, record.id);
    assert.is((await authenticate(key, request))?.keyId, record.id);
    assert.ok(await revokeApiKey(other, record.id));
    assert.is(await authenticate(key, request), undefined);
  } finally {
    await serving.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("createApiKey validates account names and publishable-key domains", async () => {
  const store = createMemoryStore();
  await rejects(() => createApiKey(store, { account: "" }), /account name/);
  await rejects(() => createApiKey(store, { account: "a/b" }), /account name/);
  await rejects(() => createApiKey(store, { account: "acme", kind: "publishable" }), /at least one domain/);
  await rejects(() => createApiKey(store, { account: "acme", domains: ["example.com"] }), /publishable keys only/);
  await rejects(
    () => createApiKey(store, { account: "acme", kind: "publishable", domains: ["https://example.com"] }),
    /not a host name/,
  );
  for (const domain of ["*.com", "*example.com", "*.*.example.com", "shop.*.example.com", "ex ample.com", "example.com:99999", "example.com:", ":80", "-example.com"]) {
    await rejects(() => createApiKey(store, { account: "acme", kind: "publishable", domains: [domain] }), /not a host name/);
  }
  const domains = [" Shop.Example.com ", "localhost:8080", "*.brand.example", "127.0.0.1", "*.shop.example.org:8443"];
  const { record } = await createApiKey(store, { account: "acme", kind: "publishable", domains });
  assert.equal(record.domains, ["shop.example.com", "localhost:8080", "*.brand.example", "127.0.0.1", "*.shop.example.org:8443"]);
  assert.is((await store.listApiKeys()).length, 1, "nothing was stored for the refused keys");
});

test("revokeApiKey takes a prefix, an id or the whole key", async () => {
  const store = createMemoryStore();
  for (const nameOf of [(k: CreatedApiKey) => k.prefix, (k: CreatedApiKey) => k.record.id, (k: CreatedApiKey) => k.key]) {
    const created = await createApiKey(store, { account: "acme" });
    const revoked = await revokeApiKey(store, nameOf(created));
    assert.is(revoked?.id, created.record.id);
    assert.type(revoked?.revokedAt, "string");
  }
  assert.is(await revokeApiKey(store, "fs_sk_nonexistent00"), undefined);
});

async function rejects(action: () => Promise<unknown>, message: RegExp): Promise<void> {
  try {
    await action();
  } catch (error) {
    assert.match(String(error), message);
    return;
  }
  assert.unreachable(`expected a rejection matching ${message}`);
}

test.run();
