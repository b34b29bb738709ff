// formsink mounted under /forms in a plain node:http app:  node --import tsx examples/node-http/server.ts
// The listener takes node:http's (req, res); for Express see examples/express/server.ts.
import { createServer } from "node:http";
import { createSubmissionsHandler } from "formsink";
import { createLibsqlStore } from "formsink/libsql";
import { createRequestListener } from "formsink/node";

const store = await createLibsqlStore({ url: process.env.FORMSINK_DB ?? "file:formsink.db" });
const forms = createRequestListener(createSubmissionsHandler(store, { basePath: "/forms" }));

const server = createServer((req, res) => {
  if (req.url?.startsWith("/forms/")) return forms(req, res);
  res.end("the host app");
});
server.listen(Number(process.env.PORT ?? 8787), "127.0.0.1", () => {
  const { port } = server.address() as import("node:net").AddressInfo;
  console.log(`listening on http://127.0.0.1:${port}`);
});
