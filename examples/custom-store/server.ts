// formsink on a store of your own, with keys checked by the host app instead of the store:
//   FORMS_API_KEY=some-long-secret node --import tsx examples/custom-store/server.ts
// Every request with that key acts for one account, "main".
import { createSubmissionsHandler, type Principal } from "formsink";
import { serve } from "formsink/node";
import { createArrayStore } from "./array-store.ts";

const apiKey = process.env.FORMS_API_KEY;
if (!apiKey) throw new Error("set FORMS_API_KEY to the key clients send in x-api-key");
const principal: Principal = { accountId: "main", kind: "secret", domains: [] };

// The store keeps no keys, so `authenticate` is required: without it the handler throws a TypeError.
const handler = createSubmissionsHandler(createArrayStore(), {
  authenticate: async (key) => ((await sameText(key, apiKey)) ? principal : undefined),
});
const server = await serve(handler, { port: Number(process.env.PORT ?? 8787) });
console.log(`listening on ${server.url}`);

/** Compares digests, so the time taken says nothing about where the texts differ. */
async function sameText(a: string, b: string): Promise<boolean> {
  const digest = async (text: string) => new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  const [x, y] = await Promise.all([digest(a), digest(b)]);
  let difference = 0;
  for (let i = 0; i < x.length; i++) difference |= x[i]! ^ y[i]!;
  return difference === 0;
}
