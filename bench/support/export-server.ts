/**
 * The server for the export benchmark, in a process of its own (so its RSS is its own):
 * `node --import tsx bench/support/export-server.ts <database file>`. Prints its URL on stdout,
 * then serves formsink on that libSQL file until killed.
 */
import { serve } from "../../adapters/node.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";

const store = await createLibsqlStore({ url: `file:${process.argv[2]}` });
const server = await serve(createSubmissionsHandler(store), { port: 0 });
process.stdout.write(`${server.url}\n`);
process.once("SIGTERM", () => {
  void server.close().then(() => store.close());
});
