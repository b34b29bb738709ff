// A formsink server on Deno:
//   deno run --allow-net --allow-env --allow-sys --allow-ffi --allow-read --allow-write examples/deno/server.ts
import { createSubmissionsHandler } from "formsink";
import { serve } from "formsink/deno";
import { createLibsqlStore } from "formsink/libsql";

const store = await createLibsqlStore({ url: Deno.env.get("FORMSINK_DB") ?? "file:formsink.db" });
const server = await serve(createSubmissionsHandler(store), { port: Number(Deno.env.get("PORT") ?? 8787) });
console.log(`listening on ${server.url}`);
