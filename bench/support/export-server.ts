/**
 * The server for the export benchmark, in a process of its own (so its RSS is its own):
 * `node --import tsx bench/support/export-server.ts <database file> [--metrics]`. Prints its URL on
 * stdout, then serves formsink on that libSQL file until killed; with `--metrics`, counting what
 * `formsink serve --metrics` counts (bench/http.ts measures what that costs).
 */
import { createServerMetrics } from "../../cli/metrics.ts";
import { serve } from "../../adapters/node.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";

const store = await createLibsqlStore({ url: `file:${process.argv[2]}` });
const metrics = process.argv[3] === "--metrics" ? createServerMetrics() : undefined;
const handler = metrics
  ? createSubmissionsHandler(metrics.timeStore(store), { log: (entry) => entry.type === "request" && metrics.observeRequest(entry) })
  : createSubmissionsHandler(store);
const server = await serve(handler, { port: 0 });
process.stdout.write(`${server.url}\n`);
process.once("SIGTERM", () => {
  void server.close().then(() => store.close());
});
