/**
 * What a dispatcher cycle's writes cost on PostgreSQL, per delivery: the client's CPU, the
 * server's (every process of a throwaway cluster, test/support/postgres.ts) and the time. Two
 * endpoints, creates imported in batches, and after each batch the outcomes of the previous
 * batch's deliveries (all succeeded) and the next claim. Blocks alternate two ways of writing
 * them: "combined" as the dispatcher does (`recordAndClaimDeliveries`, one call of a server-side
 * function, one transaction) and "separate" (the outcomes, then a claim: two calls, two commits).
 * Needs PostgreSQL installed, as the store's tests do.
 *
 *   node --import tsx bench/support/postgres-outbox-cycle.ts [batch=32] [cycles=40] [blocks=6]
 */
import { createPostgresStore } from "../../src/stores/postgres/index.ts";
import { startPostgresCluster } from "../../test/support/postgres.ts";
import { type ClaimedDelivery, type DeliveryAttempt, recordDeliveryAttempts } from "../../src/store.ts";

const cluster = await startPostgresCluster();
const database = await cluster.createDatabase();
const store = await createPostgresStore({ url: database.url });
const BATCH = Number(process.argv[2] ?? 32), CYCLES = Number(process.argv[3] ?? 40), BLOCKS = Number(process.argv[4] ?? 6);
const hooks = ["wh_a", "wh_b"];
for (const webhookId of hooks) await store.insertWebhook("acct", {
  webhookId, url: "https://r.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
  disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
});
let n = 0;
const submission = () => ({ submissionId: crypto.randomUUID(), popupId: "p", data: { email: `x${n++}@example.com` }, domain: "example.com",
  userAgent: "a", device: "desktop" as const, status: "pending" as const, createdAt: new Date().toISOString() });
const owner = "bench";
let made: DeliveryAttempt[] = [];
const outcomes = (claimed: ClaimedDelivery[]) => claimed.map((d) => ({ accountId: "acct", webhookId: d.webhook.webhookId, position: d.position, owner,
  at: Date.now(), durationMs: 1, statusCode: 204, error: null, status: "succeeded" as const, nextAttemptAt: null }));
const results: Record<string, { client: number[]; server: number[]; wall: number[] }> = { separate: { client: [], server: [], wall: [] }, combined: { client: [], server: [], wall: [] } };
for (let block = 0; block < BLOCKS * 2; block++) {
  const mode = block % 2 === 0 ? "separate" : "combined";
  let client = 0, server = 0, wall = 0, deliveries = 0;
  for (let c = 0; c < CYCLES; c++) {
    await store.importSubmissions("acct", Array.from({ length: BATCH / hooks.length }, submission));
    const claim = { now: Date.now(), limit: 128, leaseMs: 60_000, owner };
    const [cpu0, s0, t0] = [process.cpuUsage(), cluster.cpuSeconds(), performance.now()];
    let claimed: ClaimedDelivery[];
    if (mode === "separate") {
      if (made.length) await recordDeliveryAttempts(store, made);
      claimed = await store.claimDeliveries(claim);
    } else {
      claimed = made.length ? (await store.recordAndClaimDeliveries!(made, claim)).claimed : await store.claimDeliveries(claim);
    }
    const cpu = process.cpuUsage(cpu0);
    client += cpu.user + cpu.system; server += (cluster.cpuSeconds() - s0) * 1e6; wall += (performance.now() - t0) * 1000;
    deliveries += claimed.length;
    made = outcomes(claimed);
  }
  const r = results[mode]!;
  r.client.push(client / deliveries); r.server.push(server / deliveries); r.wall.push(wall / deliveries);
}
const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[xs.length >> 1]!;
for (const [mode, r] of Object.entries(results)) {
  console.log(`${mode}: per delivery (us, median of ${BLOCKS} blocks) client CPU ${median(r.client).toFixed(1)}, server CPU ${median(r.server).toFixed(1)}, wall ${median(r.wall).toFixed(1)}`);
}
await store.close();
await database.drop();
await cluster.stop();
