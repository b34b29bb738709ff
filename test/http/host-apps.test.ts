/**
 * formsink mounted as host apps do: formsink/node's listener in Express 5 under a prefix with
 * `app.use`, and the Fetch handler in Hono; and wrongly behind something that read the body
 * first, which must get a clear answer at once, not a request that never ends.
 */
import type { AddressInfo } from "node:net";
import express from "express";
import { Hono } from "hono";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createRequestListener } from "../../adapters/node.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { CONSUMED_BODY_MESSAGE } from "../../src/http/errors.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { within } from "../support/within.ts";

const t = suite("host apps: Express 5, Hono");

async function expressApp(mount: (app: express.Express, listener: ReturnType<typeof createRequestListener>) => void) {
  const store = createMemoryStore();
  const { key } = await createApiKey(store, { account: "express" });
  const logged: unknown[] = [];
  const listener = createRequestListener(createSubmissionsHandler(store, { basePath: "/forms" }), { onError: (error) => logged.push(error) });
  const app = express();
  mount(app, listener);
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
    const started = app.listen(0, "127.0.0.1", () => resolve(started));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { key, url, logged, close };
}

t("app.use(\"/forms\", listener): the prefix Express strips is read back, with basePath /forms", async () => {
  const app = await expressApp((app, listener) => app.use("/forms", listener));
  try {
    const created = await fetch(`${app.url}/forms/api/submission`, {
      method: "POST", headers: { "x-api-key": app.key, "content-type": "application/json" }, body: JSON.stringify({ popupId: "p", data: {} }),
    });
    assert.is(created.status, 201, await created.clone().text());
    const { submissionId } = (await created.json()) as { submissionId: string };
    assert.is(created.headers.get("location"), `/forms/api/submission/${submissionId}`);
    const got = await fetch(`${app.url}/forms/api/submission/${submissionId}`, { headers: { "x-api-key": app.key } });
    assert.is(got.status, 200);
    const spec = (await (await fetch(`${app.url}/forms/api/openapi.json`)).json()) as { servers: { url: string }[] };
    assert.equal(spec.servers.map((server) => server.url), ["/forms"]);
  } finally {
    await app.close();
  }
});

t("behind express.json() or express.urlencoded(): a create is answered at once with the fix, logged once", async () => {
  const app = await expressApp((app, listener) => {
    app.use(express.json());
    app.use(express.urlencoded());
    app.use("/forms", listener);
  });
  try {
    const bodies: [string, string][] = [
      ["application/json", JSON.stringify({ popupId: "p", data: {} })],
      ["application/x-www-form-urlencoded", "popupId=p&email=a%40example.com"],
      ["application/json", JSON.stringify({ popupId: "p", data: {} })],
    ];
    for (const [type, body] of bodies) {
      const response = await within(
        fetch(`${app.url}/forms/api/submission`, { method: "POST", headers: { "x-api-key": app.key, "content-type": type }, body }),
        5000,
        `a ${type} create behind a body parser`,
      );
      assert.is(response.status, 500);
      // the handler's answer, with what every answer on the create route carries: a browser
      // page can read the message, and a report can quote the request id
      assert.ok(response.headers.get("x-request-id"), "x-request-id");
      assert.is(response.headers.get("access-control-allow-origin"), "*");
      assert.is(response.headers.get("cache-control"), "no-store");
      assert.equal(await response.json(), { message: CONSUMED_BODY_MESSAGE });
    }
    assert.is(app.logged.length, 1, "one log line per listener, not one per request");
    assert.match(String(app.logged[0]), /body of POST \/forms\/api\/submission was read before formsink got it \(req\.body is set: a body parser ran\); mount formsink before express\.json\(\)/);
    // what the parser leaves alone still works: a list has no body
    assert.is((await fetch(`${app.url}/forms/api/submission`, { headers: { "x-api-key": app.key } })).status, 200);
  } finally {
    await app.close();
  }
});

t("Hono: a route that read the body before calling the handler gets the 500 that names the fix; the routes beside it work", async () => {
  const store = createMemoryStore();
  const { key } = await createApiKey(store, { account: "hono" });
  const forms = createSubmissionsHandler(store, { basePath: "/forms" });
  const app = new Hono();
  app.get("/", (c) => c.text("the host app"));
  app.post("/forms/*", async (c, next) => {
    await c.req.json(); // the mistake: Hono's parsers read the Request's body
    await next();
  });
  app.all("/forms/*", (c) => forms(c.req.raw, { clientAddress: "203.0.113.9" }));
  const response = await app.request("/forms/api/submission", {
    method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ popupId: "p", data: {} }),
  });
  assert.is(response.status, 500);
  assert.equal(await response.json(), { message: CONSUMED_BODY_MESSAGE });
  assert.ok(response.headers.get("x-request-id"), "x-request-id");
  assert.is(response.headers.get("access-control-allow-origin"), "*");
  assert.is((await app.request("/")).status, 200);
  assert.is((await app.request("/forms/api/submission", { headers: { "x-api-key": key } })).status, 200);
});

t.run();
