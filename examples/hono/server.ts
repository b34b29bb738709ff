// formsink mounted under /forms in a Hono app on Node:  node --import tsx examples/hono/server.ts
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { createSubmissionsHandler } from "formsink";
import { createLibsqlStore } from "formsink/libsql";
import { Hono } from "hono";

const store = await createLibsqlStore({ url: process.env.FORMSINK_DB ?? "file:formsink.db" });
const forms = createSubmissionsHandler(store, { basePath: "/forms" });

const app = new Hono();
app.get("/", (c) => c.text("the host app"));
// The client's address, for the rate limit on creates: without it every visitor shares one budget.
app.all("/forms/*", (c) => forms(c.req.raw, { clientAddress: getConnInfo(c).remote.address }));

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 8787), hostname: "127.0.0.1" }, (info) =>
  console.log(`listening on http://127.0.0.1:${info.port}`),
);
