// A standalone formsink server on Bun, embedding the handler:  bun examples/bun/server.ts
// (`bunx --bun formsink serve` does the same with the CLI's flags.)
import { createSubmissionsHandler } from "formsink";
import { serve } from "formsink/bun";
import { createLibsqlStore } from "formsink/libsql";

const store = await createLibsqlStore({ url: process.env.FORMSINK_DB ?? "file:formsink.db" });
const server = await serve(createSubmissionsHandler(store), { port: Number(process.env.PORT ?? 8787) });
console.log(`listening on ${server.url}`);
