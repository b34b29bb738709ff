/**
 * The connect-time address check in the runtime this runs in (Node, Bun, Deno): the webhook
 * transport's `lookup` is what a connection to a name goes through, so a name that resolves to
 * a private address is refused, and one allowed goes where the resolver said. This holds only
 * where the runtime's node:net and node:tls honour a connection's `lookup`; this suite is the proof.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { seedRows } from "../../src/testing/fixtures.ts";
import { createWebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { startReceiver } from "../support/webhook-receiver.ts";
import { webhookFor } from "./fixture.ts";

const ACCOUNT = "acct_runtime";
const toLoopback = async () => [{ address: "127.0.0.1", family: 4 }];

/** The delivery log's last error of one delivery to `url`, and how many requests the receiver got. */
async function deliverOnce(url: (port: number) => string, allowPrivate: boolean) {
  const store = createMemoryStore();
  const receiver = await startReceiver();
  const transport = createWebhookTransport({ resolve: toLoopback, allowPrivate });
  try {
    const hook = webhookFor(url(receiver.port));
    await store.insertWebhook(ACCOUNT, hook);
    await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
    await createWebhookDispatcher(store, { transport }).runOnce();
    const [delivery] = (await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 1 })).deliveries;
    return { error: delivery!.lastError, received: receiver.received.length };
  } finally {
    transport.close();
    await receiver.close();
    await store.close();
  }
}

export function resolvedAddressSuite(runtime: string): void {
  const test = suite(`webhooks: the address a name resolves to, under ${runtime}`);

  test("a name that resolves to a loopback address is refused when the connection is made", async () => {
    const { error, received } = await deliverOnce((port) => `https://receiver.test:${port}/hooks`, false);
    assert.match(error!, /^refused: receiver\.test resolves to 127\.0\.0\.1, a loopback address; the delivery transport's allowPrivate option lifts that/);
    assert.is(received, 0);
  });

  test("allowed, the connection goes to the address the check saw", async () => {
    const { error, received } = await deliverOnce((port) => `http://receiver.test:${port}/hooks`, true);
    assert.is(error, null);
    assert.is(received, 1);
  });

  test.run();
}
