// `formsink webhooks`: endpoints and their delivery log managed in the database, secrets printed once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { CompleteStore, WebhookStore } from "../../src/store.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { runHere } from "./run.ts";

interface Context {
  dir: string;
  env: Record<string, string>;
}

const cli = suite<Context>("cli: webhooks");

cli.before.each(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-webhooks-"));
  context.env = { FORMSINK_DB: `file:${join(context.dir, "formsink.db")}` };
  assert.is((await runHere(["keys", "create", "--account", "acme"], context.env)).code, 0);
});
cli.after.each((context) => rmSync(context.dir, { recursive: true, force: true }));

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

async function withStore<T>(env: Record<string, string>, use: (store: CompleteStore, accountId: string) => Promise<T>): Promise<T> {
  const store = await createLibsqlStore({ url: env.FORMSINK_DB });
  try {
    return await use(store, (await store.findAccount("acme"))!.id);
  } finally {
    await store.close();
  }
}

async function add(env: Record<string, string>, ...options: string[]): Promise<{ secret: string; webhookId: string }> {
  const added = await runHere(["webhooks", "add", "--account", "acme", ...options], env);
  assert.is(added.code, 0, added.stderr);
  const webhookId = /Added webhook (wh_[0-9a-f]{32})/.exec(added.stderr)?.[1];
  assert.ok(webhookId, added.stderr);
  return { secret: added.stdout.trim(), webhookId };
}

cli("add prints the secret alone on stdout, once; list and list --json show the endpoint without it", async ({ env }) => {
  const { secret, webhookId } = await add(env, "--url", "https://crm.example.com/hooks", "--type", "submission.created", "--type", "submission.deleted", "--popup", "newsletter", "--description", "CRM");
  assert.match(secret, SECRET);
  const table = await runHere(["webhooks", "list", "--account", "acme"], env);
  assert.is(table.code, 0);
  assert.match(table.stdout, new RegExp(`${webhookId}\\s+https://crm\\.example\\.com/hooks\\s+submission\\.created,submission\\.deleted\\s+newsletter\\s+-\\s+\\d{4}-`));
  const json = await runHere(["webhooks", "list", "--account", "acme", "--json"], env);
  const listed = JSON.parse(json.stdout) as Record<string, unknown>[];
  assert.equal(listed.map((w) => [w.webhookId, w.url, w.types, w.popupId, w.description, w.disabledAt]), [
    [webhookId, "https://crm.example.com/hooks", ["submission.created", "submission.deleted"], "newsletter", "CRM", null],
  ]);
  for (const output of [table, json]) assert.not.ok((output.stdout + output.stderr).includes(secret), "the secret is shown only by add");
  await withStore(env, async (store, accountId) => assert.equal((await store.getWebhook(accountId, webhookId))?.secrets, [secret]));
});

cli("add refuses what the API refuses, naming the option; http and private addresses only when allowed", async ({ env }) => {
  const refusals: [string[], number, RegExp][] = [
    [[], 2, /needs --url URL/],
    [["--url", "crm.example.com/hooks"], 2, /--url must be an absolute http or https URL/],
    [["--url", "http://127.0.0.1:8080/hooks"], 2, /--url is refused \(only https URLs are delivered to\).*--allow-private-webhooks/],
    [["--url", "https://192.168.1.20/hooks"], 2, /--url is refused \(192\.168\.1\.20 is a private address\)/],
    [["--url", "https://crm.example.com/hooks", "--type", "submission.made"], 2, /--type must be "submission\.created"/],
    [["--url", "https://crm.example.com/hooks", "--popup", ""], 2, /--popup must be 1 to 256 characters/],
  ];
  for (const [options, code, message] of refusals) {
    const result = await runHere(["webhooks", "add", "--account", "acme", ...options], env);
    assert.is(result.code, code, result.stderr);
    assert.match(result.stderr, message);
    assert.is(result.stdout, "");
  }
  const unknown = await runHere(["webhooks", "add", "--account", "nobody", "--url", "https://crm.example.com/hooks"], env);
  assert.equal([unknown.code, unknown.stderr.trim()], [1, 'formsink: no account "nobody" (see: formsink keys list)']);
  await add(env, "--url", "http://127.0.0.1:8080/hooks", "--allow-private-webhooks");
  await add({ ...env, FORMSINK_ALLOW_PRIVATE_WEBHOOKS: "1" }, "--url", "http://localhost:8080/hooks");
  await withStore(env, async (store, accountId) => {
    assert.equal((await store.listWebhooks(accountId)).map((w) => w.url), ["http://127.0.0.1:8080/hooks", "http://localhost:8080/hooks"]);
  });
});

cli("rotate-secret prints a new secret; both sign until the old one's 24 hours are up", async ({ env }) => {
  const { secret, webhookId } = await add(env, "--url", "https://crm.example.com/hooks");
  const rotated = await runHere(["webhooks", "rotate-secret", "--account", "acme", webhookId], env);
  assert.is(rotated.code, 0, rotated.stderr);
  const next = rotated.stdout.trim();
  assert.match(next, SECRET);
  assert.is.not(next, secret);
  assert.match(rotated.stderr, /previous one keeps signing beside it until \d{4}-\d\d-\d\dT/);
  await withStore(env, async (store, accountId) => assert.equal((await store.getWebhook(accountId, webhookId))?.secrets, [next, secret]));
  const missing = await runHere(["webhooks", "rotate-secret", "--account", "acme", "wh_00000000000000000000000000000000"], env);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /has no webhook wh_0+/);
});

cli("deliveries shows the log newest first, by status and page; retry and replay queue deliveries; remove takes the endpoint and its log", async ({ env }) => {
  const { webhookId } = await add(env, "--url", "https://crm.example.com/hooks");
  const eventIds = await withStore(env, async (store, accountId) => {
    for (let i = 0; i < 3; i++) {
      await store.insertSubmission(accountId, {
        submissionId: crypto.randomUUID(), popupId: "p", data: { i }, domain: "example.com", userAgent: "agent", device: "desktop", status: "pending",
        createdAt: new Date().toISOString(),
      });
    }
    // What a dispatcher does: the receiver takes the first and answers 503 to the others.
    const now = Date.now();
    const claimed = await store.claimDeliveries({ now, limit: 10, leaseMs: 60_000, owner: "test" });
    assert.is(claimed.length, 3);
    for (const [i, delivery] of claimed.entries()) {
      await store.recordDeliveryAttempt({
        accountId, webhookId, position: delivery.position, owner: "test", at: now, durationMs: 5, statusCode: i === 0 ? 200 : 503,
        error: i === 0 ? null : "the receiver answered 503", status: i === 0 ? "succeeded" : "pending", nextAttemptAt: i === 0 ? null : now + 60_000,
      });
    }
    const page = await store.readEvents(accountId, { limit: 10 });
    return page.expired ? [] : page.events.map((event) => event.id);
  });

  const table = await runHere(["webhooks", "deliveries", "--account", "acme", webhookId], env);
  assert.is(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split("\n");
  assert.match(lines[0]!, /^EVENT\s+TYPE\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+CODE\s+NEXT ATTEMPT\s+ERROR$/);
  const rows = lines.slice(1).map((line) => line.split(/\s+/));
  assert.equal(rows.map((cells) => [cells[0], cells[1], cells[2], cells[3], cells[5]]), [
    [eventIds[2], "submission.created", "pending", "1", "503"],
    [eventIds[1], "submission.created", "pending", "1", "503"],
    [eventIds[0], "submission.created", "succeeded", "1", "200"],
  ]);
  for (const cells of rows) assert.match(cells[4]!, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/, "the last attempt's time");
  assert.equal(rows.map((cells) => cells[6] === "-"), [false, false, true], "a next attempt only while pending");
  assert.match(lines[1]!, /the receiver answered 503$/);

  const json = JSON.parse((await runHere(["webhooks", "deliveries", "--account", "acme", webhookId, "--json", "--status", "succeeded"], env)).stdout);
  assert.equal(json.items.map((d: { eventId: string }) => d.eventId), [eventIds[0]]);
  assert.is(json.nextCursor, null);
  const first = await runHere(["webhooks", "deliveries", "--account", "acme", webhookId, "--limit", "2"], env);
  const cursor = /Older deliveries: add --cursor (\d+)/.exec(first.stderr)?.[1];
  assert.ok(cursor, first.stderr);
  const rest = await runHere(["webhooks", "deliveries", "--account", "acme", webhookId, "--limit", "2", "--cursor", cursor], env);
  assert.match(rest.stdout, new RegExp(`^${eventIds[0]}\\s`, "m"));
  assert.not.match(rest.stderr, /Older deliveries/);
  const badStatus = await runHere(["webhooks", "deliveries", "--account", "acme", webhookId, "--status", "lost"], env);
  assert.equal([badStatus.code, /--status must be pending, succeeded, failed/.test(badStatus.stderr)], [2, true]);

  const retried = await runHere(["webhooks", "retry", "--account", "acme", webhookId, eventIds[0]!], env);
  assert.is(retried.code, 0, retried.stderr);
  const missing = await runHere(["webhooks", "retry", "--account", "acme", webhookId, "evt_missing"], env);
  assert.equal([missing.code, /has no delivery of event evt_missing/.test(missing.stderr)], [1, true]);
  const replayed = await runHere(["webhooks", "replay", "--account", "acme", webhookId, "--since", new Date(Date.now() - 60_000).toISOString()], env);
  assert.equal([replayed.code, replayed.stdout.trim()], [0, "3"]);
  const noSince = await runHere(["webhooks", "replay", "--account", "acme", webhookId], env);
  assert.equal([noSince.code, /needs --since INSTANT/.test(noSince.stderr)], [2, true]);
  const badSince = await runHere(["webhooks", "replay", "--account", "acme", webhookId, "--since", "yesterday"], env);
  assert.equal([badSince.code, badSince.stderr.split("\n")[0]], [2, 'formsink: --since must be an ISO 8601 instant such as 2026-11-23T10:00:00Z (was "yesterday")']);
  await withStore(env, async (store) => {
    const due = await store.claimDeliveries({ now: Date.now(), limit: 10, leaseMs: 60_000, owner: "test" });
    assert.equal(due.map((d) => d.eventId).sort(), [...eventIds].sort(), "every event is due again");
  });

  const removed = await runHere(["webhooks", "remove", "--account", "acme", webhookId], env);
  assert.is(removed.code, 0, removed.stderr);
  assert.match((await runHere(["webhooks", "list", "--account", "acme"], env)).stderr, /No webhooks/);
  assert.is((await runHere(["webhooks", "remove", "--account", "acme", webhookId], env)).code, 1);
  await withStore(env, async (store, accountId) => assert.equal(await store.listDeliveries(accountId, webhookId, { limit: 10 }), { deliveries: [], cursor: null }));
});

cli("help and usage mistakes", async ({ env }) => {
  const help = await runHere(["webhooks", "--help"], env);
  assert.is(help.code, 0);
  assert.match(help.stdout, /formsink webhooks add --account NAME --url URL .*\[--allow-private-webhooks\]\n/);
  // retry and replay queue: the server sends on its next round, not the command
  assert.match(help.stdout, /next round: within its --webhook-poll/);
  assert.not.match(help.stdout, /at once/);
  for (const command of ["add", "list", "remove", "rotate-secret", "deliveries", "retry", "replay"]) assert.match(help.stdout, new RegExp(`formsink webhooks ${command}\\b`));
  const unknown = await runHere(["webhooks", "enable"], env);
  assert.equal([unknown.code, /unknown webhooks command "enable"/.test(unknown.stderr)], [2, true]);
  const noAccount = await runHere(["webhooks", "list"], env);
  assert.equal([noAccount.code, /webhooks list needs --account NAME/.test(noAccount.stderr)], [2, true]);
  const noId = await runHere(["webhooks", "retry", "--account", "acme", "wh_x"], env);
  assert.equal([noId.code, /webhooks retry needs WEBHOOK-ID EVENT-ID/.test(noId.stderr)], [2, true]);
});

cli.run();
