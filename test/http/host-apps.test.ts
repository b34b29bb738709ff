/**
 * formsink/node's listener mounted in Express 5 as host apps do: under a prefix with
 * `app.use`, and wrongly behind a body parser, which must get a clear answer at once, not a
 * request that never ends.
 */
import type { AddressInfo } from "node:net";
import express from "express";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { CONSUMED_BODY_MESSAGE } from "../../adapters/node-consumed-body.ts";
import { createRequestListener } from "../../adapters/node.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { within } from "../support/within.ts";

const t = suite("host apps: Express 5");

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

t.run();
