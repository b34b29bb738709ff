/**
 * Every example in examples/ as a user starts it, each answering a list request with a key made
 * beforehand. The examples import `formsink` by its package name, so they run against the
 * built package (dist/, made by `npm run build`, which `npm test` runs first).
 */
import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import { createD1Store } from "../../src/stores/d1/index.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { bundleWorker } from "../support/bundle-worker.ts";
import { collect, waitForOutput } from "../support/process.ts";
import { roomInWindow } from "../support/rate-window.ts";

const BIN = "node_modules/.bin";
const DENO_PERMISSIONS = ["--allow-net", "--allow-env", "--allow-sys", "--allow-ffi", "--allow-read", "--allow-write"];

const examples = suite<{ dir: string; db: string; key: string }>("examples");

examples.before.each(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-example-"));
  context.db = `file:${join(context.dir, "forms.db")}`;
  const store = await createLibsqlStore({ url: context.db });
  context.key = (await createApiKey(store, { account: "example" })).key;
  await store.close();
});
examples.after.each(({ dir }) => rmSync(dir, { recursive: true, force: true }));

async function expectEmptyList(url: string, key: string): Promise<void> {
  const response = await fetch(url, { headers: { "x-api-key": key } });
  assert.is(response.status, 200, await response.clone().text());
  assert.equal(await response.json(), { items: [], limit: 10, offset: 0, total: 0, nextCursor: null });
}

/**
 * Starts a server example, waits for the URL it prints, lists through it, runs `then` against
 * it, then stops it.
 */
async function serveAndList(command: string[], db: string, key: string, path = "/api/submission", then?: (url: string) => Promise<void>): Promise<string> {
  const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, PORT: "0", FORMSINK_DB: db } });
  const exited = collect(child);
  try {
    const url = (await waitForOutput(child, "stdout", /listening on (http:\/\/\S+)/))[1]!;
    await expectEmptyList(`${url}${path}`, key);
    await then?.(url);
    return url;
  } finally {
    child.kill("SIGTERM");
    const { stderr } = await exited;
    assert.not.match(stderr, /error/i, stderr);
  }
}

examples("Bun: a standalone server embedding the handler", async ({ db, key }) => {
  await serveAndList([`${BIN}/bun`, "examples/bun/server.ts"], db, key);
});

examples("Deno: a server with the documented permissions", async ({ db, key }) => {
  await serveAndList([`${BIN}/deno`, "run", ...DENO_PERMISSIONS, "examples/deno/server.ts"], db, key);
});

const SHOP = "https://shop.example";

/** A create with a publishable key from a page on its domain, sent from one loopback address. */
function createFrom(url: string, key: string, localAddress: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ popupId: "newsletter", data: { email: "a@example.com" } });
    const request = httpRequest(
      url,
      { method: "POST", localAddress, headers: { "x-api-key": key, origin: SHOP, "content-type": "application/json", connection: "close" } },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * The limit counts in fixed windows of a minute on the clock: creates that straddle a window's
 * end are counted in two budgets. Starts a test's creates early in a window.
 */
/**
 * The default publishable limit (30 a minute) holds per client address: one address is
 * refused once over it, another still creates. Linux answers on all of 127/8, so each loopback
 * address is a client of its own.
 */
async function expectABucketPerAddress(url: string, db: string): Promise<void> {
  const store = await createLibsqlStore({ url: db });
  const { key } = await createApiKey(store, { account: "example", kind: "publishable", domains: ["shop.example"] });
  await store.close();
  await roomInWindow(60, 10_000);
  for (let i = 0; i < 30; i++) assert.is((await createFrom(url, key, "127.0.0.2")).status, 201);
  const refused = await createFrom(url, key, "127.0.0.2");
  assert.is(refused.status, 429, refused.body);
  assert.match(refused.body, /Too many submissions/);
  const other = await createFrom(url, key, "127.0.0.3");
  assert.is(other.status, 201, `another address has its own budget: ${other.body}`);
}

examples("Hono: formsink under /forms next to the app's own routes, a rate-limit budget per client address", async ({ db, key }) => {
  const url = await serveAndList([process.execPath, "--import", "tsx", "examples/hono/server.ts"], db, key, "/forms/api/submission", (url) =>
    expectABucketPerAddress(`${url}/forms/api/submission`, db),
  );
  assert.ok(url.startsWith("http://127.0.0.1:"));
});

examples("Express 5: app.use(\"/forms\", listener) before the body parsers, a rate-limit budget per client address", async ({ db, key }) => {
  await serveAndList([process.execPath, "--import", "tsx", "examples/express/server.ts"], db, key, "/forms/api/submission", async (url) => {
    await expectABucketPerAddress(`${url}/forms/api/submission`, db);
    // the app's own routes, and its JSON parser after formsink, still work
    assert.is(await (await fetch(`${url}/`)).text(), "the host app");
    const echoed = await fetch(`${url}/echo`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}' });
    assert.equal(await echoed.json(), { a: 1 });
  });
});

examples("node:http: formsink under /forms next to the app's own routes", async ({ db, key }) => {
  await serveAndList([process.execPath, "--import", "tsx", "examples/node-http/server.ts"], db, key, "/forms/api/submission");
});

examples("Next.js route handler: the exported methods answer under /forms, a rate-limit budget per forwarded client address", async ({ db, key }) => {
  process.env.FORMSINK_DB = db;
  try {
    const route = (await import("../../examples/nextjs/app/forms/[...path]/route.ts")) as Record<string, (request: Request) => Promise<Response>>;
    const response = await route.GET!(new Request("http://app.test/forms/api/submission", { headers: { "x-api-key": key } }));
    assert.is(response.status, 200);
    assert.equal(await response.json(), { items: [], limit: 10, offset: 0, total: 0, nextCursor: null });
    assert.equal(Object.keys(route).sort(), ["DELETE", "GET", "OPTIONS", "PATCH", "POST"]);
    // Behind one proxy: the X-Forwarded-For entry it appended is the client, a budget each.
    const store = await createLibsqlStore({ url: db });
    const publishable = (await createApiKey(store, { account: "example", kind: "publishable", domains: ["shop.example"] })).key;
    await store.close();
    const createFrom = (forwardedFor: string) =>
      route.POST!(new Request("http://app.test/forms/api/submission", {
        method: "POST",
        headers: { "x-api-key": publishable, origin: SHOP, "content-type": "application/json", "x-forwarded-for": forwardedFor },
        body: JSON.stringify({ popupId: "newsletter", data: {} }),
      }));
    await roomInWindow(60, 10_000);
    for (let i = 0; i < 30; i++) assert.is((await createFrom("198.51.100.7")).status, 201);
    assert.is((await createFrom("203.0.113.9, 198.51.100.7")).status, 429, "an entry the client wrote does not buy a new budget");
    assert.is((await createFrom("198.51.100.8")).status, 201, "another client has its own budget");
  } finally {
    delete process.env.FORMSINK_DB;
  }
});

examples("Workers: the worker and D1 binding of wrangler.jsonc, in workerd", async () => {
  const config = JSON.parse(readFileSync("examples/workers/wrangler.jsonc", "utf8").replace(/^\s*\/\/.*$/gm, "")) as {
    main: string;
    compatibility_date: string;
    d1_databases: { binding: string; database_id: string }[];
    triggers: { crons: string[] };
  };
  const mf = new Miniflare({
    modules: true,
    script: await bundleWorker(join("examples/workers", config.main)),
    compatibilityDate: config.compatibility_date,
    d1Databases: Object.fromEntries(config.d1_databases.map((d1) => [d1.binding, d1.database_id])),
  });
  try {
    const url = await mf.ready;
    const { key } = await createApiKey(await createD1Store(await mf.getD1Database("DB")), { account: "example" });
    await expectEmptyList(new URL("/api/submission", url).href, key);
    // the cron trigger docs/webhooks.md asks for reaches the worker's scheduled handler
    assert.ok(config.triggers.crons.length > 0, "a cron trigger");
    const ran = await (await mf.getWorker()).scheduled({ cron: config.triggers.crons[0]! });
    assert.is(ran.outcome, "ok");
  } finally {
    await mf.dispose();
  }
});

examples.run();
