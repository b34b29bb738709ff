/**
 * The server of bench/correlated.ts, in a process of its own:
 *
 *   node --import tsx bench/support/correlated-server.ts libsql <database file> <key file>
 *   node --import tsx bench/support/correlated-server.ts memory <rows> <key file>
 *
 * Opens the libSQL file (made by bench/correlated.ts), or fills a memory store with the
 * correlated data set, writes a secret key of the data's account to <key file>, prints its URL
 * on stdout, then serves formsink until killed. On SIGUSR2 it writes the pauses of its garbage
 * collections since the last SIGUSR2 to <key file>.gc (JSON: kind, ms), so that the bench can
 * say how many fell among its timings.
 */
import { writeFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";
import { serve } from "../../adapters/node.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import type { CompleteStore } from "../../src/store.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { CORRELATED_ACCOUNT, importCorrelated } from "./correlated-dataset.ts";

const [kind, source, keyFile] = process.argv.slice(2) as ["libsql" | "memory", string, string];
let store: CompleteStore;
if (kind === "libsql") {
  store = await createLibsqlStore({ url: `file:${source}` });
} else {
  store = createMemoryStore();
  await importCorrelated(store, Number(source));
}
const { key } = await createApiKey(store, { account: CORRELATED_ACCOUNT });
writeFileSync(keyFile, key);
const collections: { kind: number; ms: number }[] = [];
new PerformanceObserver((entries) => {
  for (const entry of entries.getEntries()) collections.push({ kind: (entry as { detail?: { kind: number } }).detail?.kind ?? 0, ms: entry.duration });
}).observe({ entryTypes: ["gc"] });
process.on("SIGUSR2", () => writeFileSync(`${keyFile}.gc`, JSON.stringify(collections.splice(0))));
const server = await serve(createSubmissionsHandler(store), { port: 0 });
process.stdout.write(`${server.url}\n`);
process.once("SIGTERM", () => {
  void server.close().then(() => store.close());
});
