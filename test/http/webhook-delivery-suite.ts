/**
 * Webhooks end to end, in each runtime that can run a receiver (Node, Bun, Deno): an endpoint
 * added over the API, a dispatcher beside the handler (woken by its `onChange`, as `formsink
 * serve` runs it), a real receiver that checks signatures with `standardwebhooks`. The receiver
 * goes down and comes back; the delivery log over the API shows what happened.
 */
import { suite } from "uvu";
import type { Delivery } from "../../src/client/index.ts";
import * as assert from "uvu/assert";
import { type CompleteStore, isWebhookStore } from "../../src/store.ts";
import type { Submission } from "../../src/submission.ts";
import { createWebhookDispatcher, type WebhookDispatcher } from "../../src/webhooks/dispatcher.ts";
import type { WebhookTransport, WebhookTransportOptions } from "../../src/webhooks/transport.ts";
import { type Receiver, startReceiver, verifies, verifyDelivery } from "../support/webhook-receiver.ts";
import { expectJson, type Fixture, mount, type StartHttpTarget } from "./fixture.ts";

type CreateTransport = (options: WebhookTransportOptions) => WebhookTransport & { close(): void };

/** Resolves once `check` holds; fails naming `what` if it does not within a few seconds (a guard against hangs, not a measurement). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const giveUp = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > giveUp) throw new Error(`${what}: not within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function webhookDeliverySuite(target: string, start: StartHttpTarget, createStore: () => Promise<CompleteStore>, createTransport: CreateTransport): void {
  const t = suite(`${target}: webhook delivery`);
  let f: Fixture;
  let dispatcher: WebhookDispatcher | undefined;
  let transport: ReturnType<CreateTransport>;
  let receiver: Receiver;
  t.before(async () => {
    receiver = await startReceiver();
    transport = createTransport({ allowPrivate: true });
    f = await mount(start, createStore, { options: { allowPrivateWebhooks: true, onChange: () => dispatcher?.wake() } });
    if (!isWebhookStore(f.store)) throw new Error("this suite needs a store that keeps webhooks (WebhookStore)");
    dispatcher = createWebhookDispatcher(f.store, { transport, pollIntervalMs: 50 });
    dispatcher.start();
  });
  t.after(async () => {
    await dispatcher?.stop();
    transport?.close();
    await receiver?.close();
    await (f as Fixture | undefined)?.stop();
  });

  t("a signed delivery verifies with standardwebhooks; with the receiver down the log shows the failure; back up, a retry delivers", async () => {
    const { key } = await f.account();
    const created = expectJson(await f.call("POST", "/api/webhooks", { key, json: { url: `${receiver.url}/hooks`, types: ["submission.created"] } }), 201) as {
      webhookId: string;
      secret: string;
    };
    const deliveries = async () => (expectJson(await f.call("GET", `/api/webhooks/${created.webhookId}/deliveries`, { key }), 200) as { items: Delivery[] }).items;
    const create = async (email: string) =>
      expectJson(await f.call("POST", "/api/submission", { key, json: { popupId: "newsletter", data: { email } } }), 201) as Submission;

    const first = await create("jane@example.com");
    await until("the first delivery arrives", () => receiver.received.length === 1);
    const [delivery] = receiver.received;
    const payload = verifyDelivery(created.secret, delivery!) as { id: string; type: string; data: Submission };
    assert.equal(payload.data, first);
    const events = expectJson(await f.call("GET", "/api/events", { key }), 200) as { items: { id: string }[] };
    assert.equal(JSON.parse(delivery!.body), events.items[0], "the body is the event as the feed shows it");
    assert.is(delivery!.id, payload.id, "webhook-id is the event's id");
    await until("the log shows the success", async () => (await deliveries())[0]?.status === "succeeded");

    // The receiver goes down: the attempt fails and waits for its retry.
    const port = receiver.port;
    await receiver.close();
    const second = await create("joe@example.com");
    await until("the failed attempt is in the log", async () => {
      const items = await deliveries();
      return items.length === 2 && items[0]!.attempts === 1;
    });
    const [failing] = await deliveries();
    assert.equal([failing!.status, failing!.lastStatusCode], ["pending", null]);
    assert.match(failing!.lastError ?? "", /could not reach the receiver/);

    // Back on the same port; a retry over the API sends it now, signed as before.
    receiver = await startReceiver(port);
    expectJson(await f.call("POST", `/api/webhooks/${created.webhookId}/deliveries/${failing!.eventId}/retry`, { key }), 202);
    await until("the retried delivery arrives", () => receiver.received.length === 1);
    const retried = receiver.received[0]!;
    assert.is(retried.id, failing!.eventId);
    assert.equal((verifyDelivery(created.secret, retried) as { data: Submission }).data, second);
    await until("the log shows it delivered", async () => (await deliveries())[0]?.status === "succeeded");
    assert.equal((await deliveries()).map((d) => [d.status, d.attempts]), [["succeeded", 2], ["succeeded", 1]]);
  });

  t("after a rotation both secrets verify every delivery; a replay sends the kept events again", async () => {
    const { key } = await f.account();
    const created = expectJson(await f.call("POST", "/api/webhooks", { key, json: { url: `${receiver.url}/rotating` } }), 201) as { webhookId: string; secret: string };
    const rotated = expectJson(await f.call("POST", `/api/webhooks/${created.webhookId}/rotate-secret`, { key }), 200) as { secret: string };
    const ours = () => receiver.received.filter((d) => d.path === "/rotating");
    const since = new Date(Date.now() - 1000).toISOString();
    await f.call("POST", "/api/submission", { key, json: { popupId: "newsletter", data: { email: "ann@example.com" } } });
    await until("the delivery arrives", () => ours().length === 1);
    const [signed] = ours();
    assert.is(signed!.signature.split(" ").length, 2, "two signatures while both secrets sign");
    assert.ok(verifies(created.secret, signed!), "the old secret verifies");
    assert.ok(verifies(rotated.secret, signed!), "the new secret verifies");
    assert.not.ok(verifies(`whsec_${btoa("some other secret of 24 bytes")}`, signed!), "another secret does not");

    const replayed = expectJson(await f.call("POST", `/api/webhooks/${created.webhookId}/replay`, { key, json: { since } }), 202) as { replayed: number };
    assert.is(replayed.replayed, 1);
    await until("the replay arrives", () => ours().length === 2);
    assert.is(ours()[1]!.id, signed!.id, "the same event, the same webhook-id: a receiver dedupes by it");
  });

  t.run();
}
