/**
 * The server for the PostgreSQL benchmark, in a process of its own:
 * `node --import tsx bench/support/postgres-server.ts <postgres URL>`. Prints its URL on stdout,
 * then serves formsink on that database until killed.
 */
import { serve } from "../../adapters/node.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createPostgresStore } from "../../src/stores/postgres/index.ts";

const store = await createPostgresStore({ url: process.argv[2]! });
const server = await serve(createSubmissionsHandler(store), { port: 0 });
process.stdout.write(`${server.url}\n`);
process.once("SIGTERM", () => {
  void server.close().then(() => store.close());
});
