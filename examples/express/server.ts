// formsink mounted under /forms in an Express 5 app:  node --import tsx examples/express/server.ts
// Mount it before any body parser: formsink reads the body itself, and one that express.json()
// already read is gone (formsink then answers 500 naming this fix instead of waiting forever).
import express from "express";
import { createSubmissionsHandler } from "formsink";
import { createLibsqlStore } from "formsink/libsql";
import { createRequestListener } from "formsink/node";

const store = await createLibsqlStore({ url: process.env.FORMSINK_DB ?? "file:formsink.db" });
// basePath is the mount path: the listener reads the whole path (req.originalUrl).
const forms = createRequestListener(createSubmissionsHandler(store, { basePath: "/forms" }));

const app = express();
app.use("/forms", forms);
// The app's own body parsers come after formsink (or on routers of their own).
app.use(express.json());
app.get("/", (_req, res) => {
  res.send("the host app");
});
app.post("/echo", (req, res) => {
  res.json(req.body);
});

const server = app.listen(Number(process.env.PORT ?? 8787), "127.0.0.1", () => {
  const { port } = server.address() as import("node:net").AddressInfo;
  console.log(`listening on http://127.0.0.1:${port}`);
});
