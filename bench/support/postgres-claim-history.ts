/**
 * What a dispatcher cycle costs the PostgreSQL server per delivery as the deliveries kept grow:
 * two databases on one throwaway cluster (test/support/postgres.ts), one at an older schema
 * version (`from`, default 8: before migration 9) and one at the newest, each with two endpoints,
 * creates imported 16 at a time and after each the previous cycle's outcomes (all succeeded) with
 * the next claim in one call (`recordAndClaimDeliveries`), as the dispatcher writes them. Blocks
 * of cycles alternate between the two; each block prints the deliveries each database holds and
 * the server's CPU per delivery (every process of the cluster, autovacuum's too). `AUTOVACUUM=off`
 * starts the cluster without autovacuum: the tables keep no statistics, as a new database has
 * none until autovacuum first analyzes them. Needs PostgreSQL installed, as the store's tests do.
 *
 *   node --import tsx bench/support/postgres-claim-history.ts [cycles=50] [blocks=25] [from=8]
 */
import postgres from "postgres";
import { migratePostgres, POSTGRES_SCHEMA_VERSION } from "../../src/stores/postgres/migrations.ts";
import { postgresStore } from "../../src/stores/postgres/store.ts";
import type { ClaimedDelivery, CompleteStore, DeliveryAttempt } from "../../src/store.ts";
import { startPostgresCluster } from "../../test/support/postgres.ts";

const CYCLES = Number(process.argv[2] ?? 50), BLOCKS = Number(process.argv[3] ?? 25), FROM = Number(process.argv[4] ?? 8);
const BATCH = 32;
const cluster = await startPostgresCluster(process.env.AUTOVACUUM === "off" ? { autovacuum: "off" } : {});
const owner = "bench";
let n = 0;
const submission = () => ({ submissionId: crypto.randomUUID(), popupId: "p", data: { email: `x${n++}@example.com` }, domain: "example.com",
  userAgent: "a", device: "desktop" as const, status: "pending" as const, createdAt: new Date().toISOString() });
const outcomes = (claimed: ClaimedDelivery[]): DeliveryAttempt[] => claimed.map((d) => ({ accountId: "acct", webhookId: d.webhook.webhookId,
  position: d.position, owner, at: Date.now(), durationMs: 1, statusCode: 204, error: null, status: "succeeded" as const, nextAttemptAt: null }));
interface Side { name: string; store: CompleteStore; sql: postgres.Sql; drop(): Promise<void>; made: DeliveryAttempt[]; kept: number }
const sides: Side[] = [];
for (const version of [FROM, POSTGRES_SCHEMA_VERSION]) {
  const database = await cluster.createDatabase();
  const sql = postgres(database.url, { max: 4, onnotice: () => {} });
  await migratePostgres(sql, version);
  const store = postgresStore(sql, { timeoutMs: 10_000, identifyingFields: ["email"], close: async () => {} });
  for (const webhookId of ["wh_a", "wh_b"]) await store.insertWebhook("acct", {
    webhookId, url: "https://r.example/", types: null, popupId: null, description: null, createdAt: new Date().toISOString(),
    disabledAt: null, secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], previousSecretExpiresAt: null, failingSince: null,
  });
  sides.push({ name: `schema ${version}`, store, sql, drop: database.drop, made: [], kept: 0 });
}
for (let block = 0; block < BLOCKS; block++) {
  const line: string[] = [];
  for (const side of sides) {
    let server = 0, deliveries = 0;
    for (let c = 0; c < CYCLES; c++) {
      await side.store.importSubmissions("acct", Array.from({ length: BATCH / 2 }, submission));
      const claim = { now: Date.now(), limit: 128, leaseMs: 60_000, owner };
      const s0 = cluster.cpuSeconds();
      const claimed = side.made.length ? (await side.store.recordAndClaimDeliveries!(side.made, claim)).claimed : await side.store.claimDeliveries(claim);
      server += (cluster.cpuSeconds() - s0) * 1e6;
      deliveries += claimed.length;
      side.made = outcomes(claimed);
    }
    side.kept += deliveries;
    line.push(`${side.name}: ${side.kept} deliveries kept, server CPU ${(server / deliveries).toFixed(0)} us per delivery`);
  }
  console.log(`block ${block + 1}: ${line.join("; ")}`);
}
for (const side of sides) {
  await side.sql.end({ timeout: 1 });
  await side.drop();
}
await cluster.stop();
