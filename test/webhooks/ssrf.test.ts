/**
 * Server-side request forgery: the addresses a delivery may not reach, judged on the URL and,
 * for a name, on what it resolves to when the connection is made; redirects never followed.
 * Refusals go through the dispatcher into the delivery log, and the receiver (listening on
 * 127.0.0.1 the whole time) gets nothing.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { seedRows } from "../../src/testing/fixtures.ts";
import { blockedAddressReason } from "../../src/webhooks/addresses.ts";
import { createWebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { checkDeliveryUrl, createFetchWebhookTransport, type WebhookTransport } from "../../src/webhooks/transport.ts";
import { startReceiver } from "../support/webhook-receiver.ts";
import { webhookFor } from "./fixture.ts";

const ACCOUNT = "acct_ssrf";
/** What a refusal that allowPrivate lifts adds to the delivery log. */
const LIFTED = "; the delivery transport's allowPrivate option lifts that for local work (formsink serve: --allow-private-webhooks or FORMSINK_ALLOW_PRIVATE_WEBHOOKS=1)";

/** Each URL's delivery through the dispatcher: the delivery log's last error per URL, and what the receiver got. */
async function deliverTo(urls: (port: number) => string[], transport: WebhookTransport) {
  const store = createMemoryStore();
  const receiver = await startReceiver();
  try {
    const hooks = urls(receiver.port).map((url) => webhookFor(url));
    for (const hook of hooks) await store.insertWebhook(ACCOUNT, hook);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    await createWebhookDispatcher(store, { transport }).runOnce();
    const errors: Record<string, string | null> = {};
    for (const hook of hooks) {
      const [delivery] = (await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 1 })).deliveries;
      errors[hook.url.replace(String(receiver.port), "PORT")] = delivery === undefined ? "no attempt" : delivery.lastError;
    }
    return { errors, received: receiver.received.length };
  } finally {
    await receiver.close();
    await store.close();
  }
}

const test = suite("webhooks: server-side request forgery");

test("loopback, private, link-local, carrier-grade NAT, multicast, metadata and reserved addresses are refused in every form; public ones pass", () => {
  const refused: [string, string][] = [
    ["127.0.0.1", "a loopback address"], ["127.8.9.10", "a loopback address"], ["::1", "a loopback address"], ["[::1]", "a loopback address"],
    ["10.0.0.1", "a private address"], ["172.16.5.4", "a private address"], ["172.31.255.255", "a private address"], ["192.168.1.1", "a private address"],
    ["169.254.169.254", "a cloud metadata address"], ["100.100.100.200", "a cloud metadata address"], ["fd00:ec2::254", "a cloud metadata address"],
    ["169.254.1.1", "a link-local address"], ["fe80::1%eth0", "a link-local address"], ["100.64.0.1", "a carrier-grade NAT address"],
    ["224.0.0.251", "a multicast address"], ["ff02::1", "a multicast address"], ["fc00::1", "a private address"], ["fd12:3456::1", "a private address"],
    ["0.0.0.0", "an unspecified address"], ["::", "an unspecified address"], ["255.255.255.255", "a reserved address"],
    ["::ffff:127.0.0.1", "a loopback address"], ["::ffff:7f00:1", "a loopback address"], ["::ffff:a9fe:a9fe", "a cloud metadata address"],
    ["::ffff:0:10.0.0.1", "a private address"], ["::10.0.0.1", "a private address"], ["64:ff9b::a00:1", "a private address"],
    ["2002:c0a8:101::1", "a private address"], ["2001:db8::1", "a documentation address"],
  ];
  for (const [address, reason] of refused) assert.is(blockedAddressReason(address), reason, address);
  for (const address of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]) {
    assert.is(blockedAddressReason(address), undefined, address);
  }
});

test("a URL is refused for what its host spells, however it spells it, and unless it is https", () => {
  const refused = (url: string) => {
    try {
      checkDeliveryUrl(url);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };
  assert.is(refused("https://0x7f.1/hook"), `refused: 127.0.0.1 is a loopback address${LIFTED}`);
  assert.is(refused("https://2130706433/"), `refused: 127.0.0.1 is a loopback address${LIFTED}`);
  assert.is(refused("https://[::ffff:169.254.169.254]/"), `refused: [::ffff:a9fe:a9fe] is a cloud metadata address${LIFTED}`);
  assert.is(refused("https://api.localhost/"), `refused: api.localhost names this machine${LIFTED}`);
  assert.is(refused("http://example.com/"), `refused: only https URLs are delivered to${LIFTED}`);
  assert.is(refused("ftp://example.com/"), "refused: only https URLs are delivered to");
  assert.is(refused("https://example.com/hooks"), undefined);
  assert.is(checkDeliveryUrl("http://127.0.0.1:8080/", { allowPrivate: true }).port, "8080", "allowed for local work");
});

test("every delivery to a refused address fails before connecting, and the refusal is in the delivery log", async () => {
  const resolve = async (hostname: string) =>
    hostname === "private.test" ? [{ address: "10.1.2.3", family: 4 }] : hostname === "loopback.test" ? [{ address: "127.0.0.1", family: 4 }] : [];
  const transport = createWebhookTransport({ resolve });
  try {
    const { errors, received } = await deliverTo(
      (port) => [
        `https://127.0.0.1:${port}/`, `https://[::1]:${port}/`, "https://10.0.0.7/", "https://169.254.169.254/latest/meta-data/",
        `https://localhost:${port}/`, `https://loopback.test:${port}/`, "https://private.test/", `http://127.0.0.1:${port}/`,
      ],
      transport,
    );
    assert.equal(errors, {
      "https://127.0.0.1:PORT/": `refused: 127.0.0.1 is a loopback address${LIFTED}`,
      "https://[::1]:PORT/": `refused: [::1] is a loopback address${LIFTED}`,
      "https://10.0.0.7/": `refused: 10.0.0.7 is a private address${LIFTED}`,
      "https://169.254.169.254/latest/meta-data/": `refused: 169.254.169.254 is a cloud metadata address${LIFTED}`,
      "https://localhost:PORT/": `refused: localhost names this machine${LIFTED}`,
      "https://loopback.test:PORT/": `refused: loopback.test resolves to 127.0.0.1, a loopback address${LIFTED}`,
      "https://private.test/": `refused: private.test resolves to 10.1.2.3, a private address${LIFTED}`,
      "http://127.0.0.1:PORT/": `refused: only https URLs are delivered to${LIFTED}`,
    });
    assert.is(received, 0);
  } finally {
    transport.close();
  }
});

test("a handler allowing private webhooks beside a transport left at its default: the delivery log names the setting to give the transport", async () => {
  const store = createMemoryStore();
  const { key, record } = await createApiKey(store, { account: ACCOUNT, kind: "secret" });
  const handler = createSubmissionsHandler(store, { allowPrivateWebhooks: true });
  const post = (path: string, body: unknown) =>
    handler(new Request(`http://localhost${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) }));
  const transport = createWebhookTransport();
  try {
    const added = await post("/api/webhooks", { url: "http://127.0.0.1:9/hooks" });
    assert.is(added.status, 201, "the handler allows it");
    assert.is((await post("/api/submission", { popupId: "p", data: { email: "a@example.com" } })).status, 201);
    await createWebhookDispatcher(store, { transport }).runOnce();
    const { webhookId } = (await added.json()) as { webhookId: string };
    const [delivery] = (await store.listDeliveries(record.accountId, webhookId, { limit: 1 })).deliveries;
    assert.is(delivery!.lastError, `refused: only https URLs are delivered to${LIFTED}`);
  } finally {
    transport.close();
    await store.close();
  }
});

test("a name is judged by the address the connection is made to: the resolver's answer is where it goes", async () => {
  const resolve = async () => [{ address: "127.0.0.1", family: 4 }];
  const allowed = createWebhookTransport({ resolve, allowPrivate: true });
  try {
    const { errors, received } = await deliverTo((port) => [`http://receiver.test:${port}/hooks`], allowed);
    assert.equal(errors, { "http://receiver.test:PORT/hooks": null });
    assert.is(received, 1);
  } finally {
    allowed.close();
  }
});

test("a redirect is not followed, not even to an allowed address: the attempt fails with the 3xx", async () => {
  const target = await startReceiver();
  const nodeTransport = createWebhookTransport({ allowPrivate: true });
  const transports = [nodeTransport, createFetchWebhookTransport({ allowPrivate: true })];
  try {
    for (const transport of transports) {
      const store = createMemoryStore();
      const redirecting = await startReceiver();
      redirecting.answer = { status: 307, headers: { location: `${target.url}/stolen` } };
      const hook = webhookFor(`${redirecting.url}/hooks`);
      await store.insertWebhook(ACCOUNT, hook);
      await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
      await createWebhookDispatcher(store, { transport }).runOnce();
      const [delivery] = (await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 1 })).deliveries;
      assert.equal([delivery!.lastStatusCode, delivery!.lastError], [307, "the receiver answered 307 (redirects are not followed)"]);
      assert.is(redirecting.received.length, 1);
      await redirecting.close();
      await store.close();
    }
    assert.is(target.received.length, 0, "the redirect's target got nothing");
  } finally {
    nodeTransport.close();
    await target.close();
  }
});

test("the fetch transport (Workers) refuses the same IP literals and local names before fetching", async () => {
  let fetched = 0;
  const transport = createFetchWebhookTransport({ fetch: async () => (fetched++, new Response(null, { status: 204 })) });
  const { errors } = await deliverTo(
    (port) => [`https://127.0.0.1:${port}/`, "https://[::ffff:10.0.0.1]/", "https://169.254.169.254/", `https://localhost:${port}/`, "http://example.com/", "https://example.com/"],
    transport,
  );
  assert.equal(errors, {
    "https://127.0.0.1:PORT/": `refused: 127.0.0.1 is a loopback address${LIFTED}`,
    "https://[::ffff:10.0.0.1]/": `refused: [::ffff:a00:1] is a private address${LIFTED}`,
    "https://169.254.169.254/": `refused: 169.254.169.254 is a cloud metadata address${LIFTED}`,
    "https://localhost:PORT/": `refused: localhost names this machine${LIFTED}`,
    "http://example.com/": `refused: only https URLs are delivered to${LIFTED}`,
    "https://example.com/": null,
  });
  assert.is(fetched, 1, "only the public URL was fetched");
});

test.run();
