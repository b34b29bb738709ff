/**
 * One real delivery in the runtime this runs in (Node, Bun, Deno): the Node transport over that
 * runtime's node:http, to a live receiver, verified by standardwebhooks; and a name resolving to
 * a private address refused at connect time, which only holds where the runtime's node:http
 * honours the connection's `lookup`.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import { readEventsAsJson } from "../../src/store.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { seedRows } from "../../src/testing/fixtures.ts";
import { createWebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import { startReceiver, verifyDelivery } from "../support/webhook-receiver.ts";
import { webhookFor } from "./fixture.ts";

const ACCOUNT = "acct_runtime";

export function webhookDeliverySuite(name: string): void {
  const test = suite(`webhook delivery: ${name}`);

  test("a created submission reaches a live receiver, signed so that standardwebhooks verifies it", async () => {
    const store = createMemoryStore();
    const receiver = await startReceiver();
    const transport = createWebhookTransport({ allowPrivate: true });
    try {
      const hook = webhookFor(`${receiver.url}/hooks`);
      await store.insertWebhook(ACCOUNT, hook);
      const [row] = seedRows(1);
      await store.insertSubmission(ACCOUNT, row!);
      assert.is(await createWebhookDispatcher(store, { transport }).runOnce(), 1);
      const page = await readEventsAsJson(store, ACCOUNT, { limit: 10 });
      assert.equal(receiver.received.map((d) => d.body), page.expired ? [] : page.events);
      assert.equal((verifyDelivery(hook.secrets[0]!, receiver.received[0]!) as { data: unknown }).data, row);
    } finally {
      transport.close();
      await receiver.close();
      await store.close();
    }
  });

  test("a name that resolves to a private address is refused when the connection is made", async () => {
    const store = createMemoryStore();
    const receiver = await startReceiver();
    const transport = createWebhookTransport({ resolve: async () => [{ address: "127.0.0.1", family: 4 }] });
    try {
      const hook = webhookFor(`https://receiver.test:${receiver.port}/hooks`);
      await store.insertWebhook(ACCOUNT, hook);
      await store.insertSubmission(ACCOUNT, seedRows(1)[0]!);
      await createWebhookDispatcher(store, { transport }).runOnce();
      const [delivery] = (await store.listDeliveries(ACCOUNT, hook.webhookId, { limit: 1 })).deliveries;
      assert.is(delivery!.lastError, "refused: receiver.test resolves to 127.0.0.1, a loopback address");
      assert.is(receiver.received.length, 0);
    } finally {
      transport.close();
      await receiver.close();
      await store.close();
    }
  });

  test.run();
}
