/**
 * The popup as a visitor meets it: formsink and a separate static site (another origin) run on
 * this machine, real headless Chromium (Debian's, driven by playwright-core) opens the site,
 * and what got stored is checked through the list API with the account's secret key.
 *
 * Sites live on made-up hosts that Chromium resolves to 127.0.0.1: shop.test is on the key's
 * domains, evil.test is not. Set FORMSINK_UPDATE_SCREENSHOT=1 to refresh the screenshot docs/browser.md shows.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type NodeServer, serve } from "../../adapters/node.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import type { LogEntry } from "../../src/options.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import type { Submission } from "../../src/submission.ts";

const EXAMPLE = new URL("../../examples/popup/", import.meta.url);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const DESKTOP_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const IPHONE_UA =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

interface World {
  api: NodeServer;
  site: Server;
  sitePort: number;
  browser: Browser;
  secretKey: string;
  publishableKey: string;
  log: LogEntry[];
}

const e2e = suite<{ world: World; setupError?: unknown }>("browser: the popup and the no-JS form");

// uvu drops an error thrown by a `before` hook without a word; kept here, it fails every test
// with its message instead.
e2e.before(async (context) => {
  try {
    context.world = await openWorld();
  } catch (error) {
    context.setupError = error;
  }
});
e2e.before.each(({ setupError }) => {
  if (setupError !== undefined) throw setupError;
});

async function openWorld(): Promise<World> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), or set CHROMIUM_PATH`);
  }
  // Whatever this setup opened is closed again when a later step fails, so a failed setup
  // reports its error instead of leaving servers that keep the test process alive.
  const opened: (() => Promise<unknown>)[] = [];
  try {
    const store = createMemoryStore();
    const log: LogEntry[] = [];
    const api = await serve(createSubmissionsHandler(store, { log: (entry) => log.push(entry) }), { port: 0 });
    opened.push(() => api.close());
    const { key: secretKey } = await createApiKey(store, { account: "acme" });
    const { key: publishableKey } = await createApiKey(store, { account: "acme", kind: "publishable", domains: ["shop.test"] });
    const { server: site, port: sitePort } = await serveSite(api.url, publishableKey);
    opened.push(() => new Promise((resolve) => site.close(resolve)));
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP *.test 127.0.0.1",
        // Plain http on made-up hosts, as on a developer's machine: no upgrade to https.
        "--disable-features=HttpsUpgrades",
      ],
      timeout: 30_000,
    });
    return { api, site, sitePort, browser, secretKey, publishableKey, log };
  } catch (error) {
    for (const close of opened.reverse()) await close();
    throw error;
  }
}

e2e.after(async ({ world }) => {
  if (!world) return;
  await world.browser.close();
  await new Promise((resolve) => world.site.close(resolve));
  await world.api.close();
});

/**
 * The example page (examples/popup/index.html) with its placeholders filled in: this key, this
 * formsink, a redirect back to the site, and the popupId asked for in `?popupId=`.
 */
function serveSite(apiUrl: string, publishableKey: string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    const file = url.pathname === "/" ? "index.html" : url.pathname.slice(1);
    if (!["index.html", "thanks.html", "formsink-popup.js"].includes(file)) return void res.writeHead(404).end();
    let body = readFileSync(new URL(file, EXAMPLE), "utf8");
    if (file === "index.html") {
      body = body
        .replaceAll("fs_pk_YOUR_PUBLISHABLE_KEY", publishableKey)
        .replaceAll("http://127.0.0.1:8787", apiUrl)
        .replaceAll("https://shop.example.com/thanks.html", `http://${req.headers.host}/thanks.html`)
        .replaceAll('"newsletter"', `"${url.searchParams.get("popupId") ?? "newsletter"}"`);
    }
    res.writeHead(200, { "content-type": file.endsWith(".js") ? "text/javascript" : "text/html; charset=utf-8" }).end(body);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port })));
}

async function submissions(world: World, popupId: string): Promise<Submission[]> {
  const response = await fetch(`${world.api.url}/api/submission?popupId=${popupId}&limit=100`, { headers: { "x-api-key": world.secretKey } });
  assert.is(response.status, 200);
  return ((await response.json()) as { items: Submission[] }).items;
}

async function openPage(world: World, host: string, popupId: string, options: { userAgent?: string; javaScriptEnabled?: boolean } = {}) {
  const context: BrowserContext = await world.browser.newContext({ userAgent: DESKTOP_UA, viewport: { width: 900, height: 620 }, ...options });
  const page: Page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(`http://${host}:${world.sitePort}/?popupId=${popupId}`);
  return { context, page };
}

const popup = (page: Page) => page.locator("[data-formsink-popup] form");

e2e("the popup posts an email; it is stored once with the page's domain and the visitor's device", async ({ world }) => {
  const { context, page } = await openPage(world, "shop.test", "popup-desktop");
  try {
    const form = popup(page);
    await form.locator("input[type=email]").fill("jane@example.com");
    const shot = await page.screenshot();
    assert.ok(shot.byteLength > 1000 && shot.subarray(1, 4).toString() === "PNG", "a PNG screenshot of the popup");
    writeFileSync(
      process.env.FORMSINK_UPDATE_SCREENSHOT ? new URL("popup.png", EXAMPLE) : join(tmpdir(), "formsink-popup.png"),
      shot,
    );
    const idempotencyKeys: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST") idempotencyKeys.push(request.headers()["idempotency-key"] ?? "");
    });
    await form.locator("button[type=submit]").click();
    assert.is(await form.locator(".msg.ok").textContent(), "Thank you! You're on the list.");

    const stored = await submissions(world, "popup-desktop");
    assert.is(stored.length, 1);
    assert.equal(stored[0]!.data, { email: "jane@example.com" });
    assert.is(stored[0]!.domain, "shop.test");
    assert.is(stored[0]!.device, "desktop");
    assert.is(stored[0]!.userAgent, DESKTOP_UA);
    assert.equal(idempotencyKeys.length, 1);
    assert.match(idempotencyKeys[0]!, /^[0-9a-f]{32}$/);
  } finally {
    await context.close();
  }
});

e2e("a request lost on the way back is retried once with the same Idempotency-Key: one submission", async ({ world }) => {
  const { context, page } = await openPage(world, "shop.test", "popup-retry");
  try {
    const seen: string[] = [];
    let first = true;
    await page.route(`${world.api.url}/api/submission`, async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      seen.push(route.request().headers()["idempotency-key"] ?? "");
      if (!first) return route.continue();
      first = false;
      // The first request reaches formsink and is stored, but its answer never arrives.
      await route.fetch();
      return route.abort("connectionreset");
    });
    const form = popup(page);
    await form.locator("input[type=email]").fill("retry@example.com");
    await form.locator("button[type=submit]").click();
    assert.is(await form.locator(".msg.ok").textContent(), "Thank you! You're on the list.");
    assert.is(seen.length, 2);
    assert.is(seen[0], seen[1]);
    const posts = world.log.filter((entry) => entry.type === "request" && entry.method === "POST" && entry.status === 201);
    assert.ok(posts.length >= 2, "formsink answered both requests");
    const stored = await submissions(world, "popup-retry");
    assert.is(stored.length, 1);
    assert.equal(stored[0]!.data, { email: "retry@example.com" });
  } finally {
    await context.close();
  }
});

e2e("on a site off the key's domains the popup shows formsink's error, and nothing is stored", async ({ world }) => {
  const { context, page } = await openPage(world, "evil.test", "popup-evil");
  try {
    const form = popup(page);
    await form.locator("input[type=email]").fill("victim@example.com");
    await form.locator("button[type=submit]").click();
    const message = await form.locator(".msg.error").textContent();
    assert.is(message, `This key may not be used from http://evil.test:${world.sitePort}: it is not one of the key's domains`);
    assert.equal(await submissions(world, "popup-evil"), []);
  } finally {
    await context.close();
  }
});

e2e("a bot that fills the hidden honeypot field sees success, and nothing is stored", async ({ world }) => {
  const { context, page } = await openPage(world, "shop.test", "popup-bot");
  try {
    const form = popup(page);
    await form.locator("input[type=email]").fill("bot@spam.test");
    await form.locator("input[name=_gotcha]").evaluate((input: { value: string }) => {
      input.value = "https://spam.test";
    });
    await form.locator("button[type=submit]").click();
    assert.is(await form.locator(".msg.ok").textContent(), "Thank you! You're on the list.");
    assert.equal(await submissions(world, "popup-bot"), []);
  } finally {
    await context.close();
  }
});

e2e("without JavaScript the plain form posts, is redirected (303) to the site's thank-you page, and is stored", async ({ world }) => {
  const { context, page } = await openPage(world, "shop.test", "form-nojs", { javaScriptEnabled: false, userAgent: IPHONE_UA });
  try {
    assert.is(await page.locator("[data-formsink-popup]").count(), 0, "no popup without JavaScript");
    const form = page.locator("form[data-formsink]");
    await form.locator("input[name=email]").fill("nojs@example.com");
    const [redirect] = await Promise.all([
      page.waitForResponse((response) => response.url() === `${world.api.url}/api/submission`),
      form.locator("button[type=submit]").click(),
    ]);
    assert.is(redirect.status(), 303);
    await page.waitForURL(`http://shop.test:${world.sitePort}/thanks.html`);
    assert.is(await page.locator("h1").textContent(), "Thanks for subscribing!");
    const stored = await submissions(world, "form-nojs");
    assert.is(stored.length, 1);
    assert.equal(stored[0]!.data, { email: "nojs@example.com" });
    assert.is(stored[0]!.domain, "shop.test");
    assert.is(stored[0]!.device, "mobile");
  } finally {
    await context.close();
  }
});

e2e.run();
