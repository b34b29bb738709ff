/**
 * The contract for web pages: publishable keys and their domains, CORS, HTML form posts,
 * the honeypot, rate limits and Idempotency-Key. Part of `httpSuite`, so it runs against every
 * target and runtime; runtime-agnostic like it (no `node:*`).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import type { Principal } from "../../src/auth/principal.ts";
import type { SubmissionsHandlerOptions } from "../../src/options.ts";
import type { CompleteStore } from "../../src/store.ts";
import type { Submission } from "../../src/submission.ts";
import {
  type CallOptions, expectError, expectJson, expectSubmission, type Fixture, IPHONE_UA, listPage, mount, type Reply,
  type Site, type StartHttpTarget, totalOf,
} from "./fixture.ts";
import { roomInWindow } from "../support/rate-window.ts";

const SHOP = "https://shop.example.com";
const DOMAINS = ["shop.example.com", "*.brand.test", "app.example.org:8443"];
const DESKTOP_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
const URLENCODED = "application/x-www-form-urlencoded";

type CreateStore = () => Promise<CompleteStore>;

export function browserIngestSuite(target: string, start: StartHttpTarget, createStore: CreateStore): void {
  publishableSuite(target, start, createStore);
  formSuite(target, start, createStore);
  rateLimitSuite(target, start, createStore);
  idempotencySuite(target, start, createStore);
}

/** A POST to the create path as a page on `origin` would send it. */
function fromPage(origin: string | undefined, options: CallOptions = {}): CallOptions {
  return { ...options, headers: { ...(origin === undefined ? {} : { origin }), "user-agent": DESKTOP_UA, ...options.headers } };
}

/** A urlencoded form post (what a `<form method="post">` sends) from `origin`. */
function formPost(fields: [string, string][] | string, origin: string | undefined = SHOP, headers: Record<string, string> = {}): CallOptions {
  const body = typeof fields === "string" ? fields : new URLSearchParams(fields).toString();
  return fromPage(origin, { body, headers: { "content-type": URLENCODED, ...headers } });
}

const post = (f: Fixture, options: CallOptions) => f.call("POST", "/api/submission", options);

const created = (reply: Reply): Submission => expectSubmission(expectJson(reply, 201));

function withFixture(name: string, start: StartHttpTarget, createStore: CreateStore, options: SubmissionsHandlerOptions = {}) {
  const t = suite(name);
  const holder: { f?: Fixture } = {};
  t.before(async () => {
    holder.f = await mount(start, createStore, { options });
  });
  t.after(async () => {
    await holder.f?.stop();
  });
  return { t, fixture: () => holder.f! };
}

function publishableSuite(target: string, start: StartHttpTarget, createStore: CreateStore): void {
  const { t, fixture } = withFixture(`${target}: publishable keys and CORS`, start, createStore);

  t("publishable: creates from a page on its domain; domain, userAgent and device come from the request", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const reply = await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "newsletter", data: { email: "jane@example.com" } } }));
    const submission = created(reply);
    assert.is(submission.domain, "shop.example.com");
    assert.is(submission.userAgent, DESKTOP_UA);
    assert.is(submission.device, "desktop");
    const phone = created(await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {} }, headers: { "user-agent": IPHONE_UA } })));
    assert.is(phone.device, "mobile");
    const page = await listPage(f, site.key, "orderBy=created_at");
    assert.equal(page.items, [submission, phone]);
  });

  t("publishable: each kind of domain admits exactly its pages, on Origin or else Referer", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const allowed: [what: string, headers: Record<string, string>, domain: string][] = [
      ["the listed host", { origin: SHOP }, "shop.example.com"],
      ["the listed host on another port", { origin: "http://shop.example.com:3000" }, "shop.example.com"],
      ["a subdomain of a *. domain", { origin: "https://a.brand.test" }, "a.brand.test"],
      ["a deeper subdomain of a *. domain", { origin: "https://x.y.brand.test" }, "x.y.brand.test"],
      ["the listed port", { origin: "https://app.example.org:8443" }, "app.example.org"],
      ["Referer when there is no Origin", { referer: `${SHOP}/pricing?plan=pro` }, "shop.example.com"],
      ["Referer when Origin is null", { origin: "null", referer: "https://a.brand.test/" }, "a.brand.test"],
      ["a host written with capitals and a trailing dot", { origin: "https://SHOP.Example.com." }, "shop.example.com."],
    ];
    for (const [what, headers, domain] of allowed) {
      const reply = await post(f, { key: site.publishableKey, json: { popupId: "p", data: {} }, headers: { "user-agent": DESKTOP_UA, ...headers } });
      assert.is(reply.status, 201, `${what}: ${reply.text}`);
      assert.is(expectSubmission(reply.json).domain, domain, what);
    }
    const refused: [what: string, headers: Record<string, string>][] = [
      ["another site", { origin: "https://evil.test" }],
      ["the domain of a *. entry itself", { origin: "https://brand.test" }],
      ["a name that only ends like a *. domain", { origin: "https://evilbrand.test" }],
      ["a listed host under another domain", { origin: "https://shop.example.com.evil.test" }],
      ["a subdomain of an exact host", { origin: "https://x.shop.example.com" }],
      ["a port other than the listed one", { origin: "https://app.example.org" }],
      ["an allowed Referer behind a foreign Origin", { origin: "https://evil.test", referer: `${SHOP}/` }],
      ["a page that is not http(s)", { origin: "chrome-extension://abcdef" }],
      ["a listed host under a scheme that is not http(s)", { origin: "ftp://shop.example.com" }],
      ["an Origin that is not a URL", { origin: "shop.example.com" }],
      ["Origin null and no Referer", { origin: "null" }],
      ["neither Origin nor Referer", {}],
    ];
    for (const [what, headers] of refused) {
      const reply = await post(f, { key: site.publishableKey, json: { popupId: "p", data: {} }, headers });
      expectError(reply, 403, /domains/);
    }
    assert.is(await totalOf(f, site.key), allowed.length);
  });

  t("publishable: domain, userAgent and device in the body are 403 naming the field", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    for (const [field, value] of [["domain", "other.example"], ["userAgent", IPHONE_UA], ["device", "mobile"]]) {
      const reply = await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {}, [field!]: value } }));
      expectError(reply, 403, new RegExp(`^${field} can only be set with a secret key`));
    }
    assert.is(await totalOf(f, site.key), 0);
  });

  t("publishable: every other operation is 403, even from an allowed page", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const submission = created(await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {} } })));
    const path = `/api/submission/${submission.submissionId}`;
    for (const [method, route, options] of [
      ["GET", "/api/submission", {}], ["GET", path, {}], ["PATCH", path, { json: { status: "completed" } }], ["DELETE", path, {}],
    ] as [string, string, CallOptions][]) {
      expectError(await f.call(method, route, fromPage(SHOP, { ...options, key: site.publishableKey })), 403, "This operation needs a secret key");
    }
    assert.equal((await listPage(f, site.key)).items, [submission]);
  });

  t("publishable: a host app's own authenticate may return publishable principals", async () => {
    const store = await createStore();
    const account = await store.ensureAccount("custom");
    // Keys of the host app's own format, without a keyId: rate limits still count each key apart.
    const principals: Record<string, Principal> = {
      "site-key": { accountId: account.id, kind: "publishable", domains: ["shop.example.com"] },
      "other-site-key": { accountId: account.id, kind: "publishable", domains: ["shop.example.com"] },
      "server-key": { accountId: account.id, kind: "secret", domains: [] },
    };
    const g = await mount(start, async () => store, {
      options: { authenticate: async (key) => principals[key], rateLimit: { publishable: { limit: 1, windowSeconds: 60 } } },
    });
    try {
      created(await post(g, fromPage(SHOP, { key: "site-key", json: { popupId: "p", data: {} } })));
      expectError(await post(g, fromPage("https://evil.test", { key: "site-key", json: { popupId: "p", data: {} } })), 403);
      expectError(await post(g, fromPage(SHOP, { key: "site-key", json: { popupId: "p", data: {} } })), 429);
      created(await post(g, fromPage(SHOP, { key: "other-site-key", json: { popupId: "p", data: {} } })));
      expectError(await post(g, fromPage(SHOP, { key: "unknown", json: { popupId: "p", data: {} } })), 401, "Invalid API key");
      // a secret key of any format is refused in a form field
      const secretInField = await post(g, formPost([["_key", "server-key"], ["popupId", "p"]]));
      expectError(secretInField, 401, /^Secret keys are accepted only in the x-api-key header/);
      created(await post(g, { key: "server-key", json: { popupId: "p", data: {} } }));
    } finally {
      await g.stop();
    }
  });

  t("cors: a preflight on the create path answers any origin, without a key", async () => {
    const f = fixture();
    for (const origin of ["https://shop.example.com", "https://anyone.test", "null"]) {
      const reply = await f.call("OPTIONS", "/api/submission", {
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type,idempotency-key,x-api-key" },
      });
      assert.is(reply.status, 204, reply.text);
      assert.is(reply.text, "");
      assert.is(reply.headers.get("access-control-allow-origin"), "*");
      assert.is(reply.headers.get("access-control-allow-methods"), "POST");
      const allowed = (reply.headers.get("access-control-allow-headers") ?? "").split(",").map((h) => h.trim().toLowerCase()).sort();
      assert.equal(allowed, ["content-type", "idempotency-key", "x-api-key"]);
      assert.ok(Number(reply.headers.get("access-control-max-age")) > 0);
    }
  });

  t("cors: every answer to a create is readable cross-origin, errors included; other routes are not", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const answers: [status: number, options: CallOptions][] = [
      [201, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {} } })],
      [400, fromPage(SHOP, { key: site.publishableKey, json: { data: {} } })],
      [401, fromPage(SHOP, { json: { popupId: "p", data: {} } })],
      [401, fromPage(SHOP, { key: "fs_pk_nope", json: { popupId: "p", data: {} } })],
      [403, fromPage("https://evil.test", { key: site.publishableKey, json: { popupId: "p", data: {} } })],
      [413, fromPage(SHOP, { key: site.publishableKey, rawJson: `{"popupId":"p","data":{"a":"${"x".repeat(70_000)}"}}` })],
      [415, fromPage(SHOP, { key: site.publishableKey, body: "x", headers: { "content-type": "text/plain" } })],
    ];
    for (const [status, options] of answers) {
      const reply = await post(f, options);
      assert.is(reply.status, status, reply.text);
      assert.is(reply.headers.get("access-control-allow-origin"), "*", `${status}`);
      const exposed = (reply.headers.get("access-control-expose-headers") ?? "").toLowerCase();
      for (const header of ["location", "retry-after", "ratelimit", "ratelimit-policy", "idempotent-replayed"]) {
        assert.ok(exposed.includes(header), `${status} exposes ${header}: ${exposed}`);
      }
    }
    const list = await f.call("GET", "/api/submission", fromPage(SHOP, { key: site.key }));
    assert.is(list.status, 200);
    assert.is(list.headers.get("access-control-allow-origin"), null);
    const preflightElsewhere = await f.call("OPTIONS", "/api/submission/0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11", { headers: { origin: SHOP } });
    expectError(preflightElsewhere, 405);
    assert.is(preflightElsewhere.headers.get("access-control-allow-origin"), null);
  });

  t.run();
}

function formSuite(target: string, start: StartHttpTarget, createStore: CreateStore): void {
  const { t, fixture } = withFixture(`${target}: HTML forms and the honeypot`, start, createStore);

  t("form: a urlencoded post with _key creates; fields but popupId and _* are data; repeated fields are lists", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const reply = await post(f, formPost([
      ["_key", site.publishableKey], ["popupId", "newsletter"], ["email", "jane+news@example.com"], ["name", "Jane Doe & Co"],
      ["topics", "shoes"], ["topics", "hats"], ["note", ""], ["_gotcha", ""], ["_utm", "dropped"], ["domain", "in data, not the domain"],
    ], SHOP, { accept: "application/json" }));
    const submission = created(reply);
    assert.equal(submission.data, {
      email: "jane+news@example.com", name: "Jane Doe & Co", topics: ["shoes", "hats"], note: "", domain: "in data, not the domain",
    });
    assert.is(submission.popupId, "newsletter");
    assert.is(submission.domain, "shop.example.com");
    assert.is(reply.headers.get("location"), `/api/submission/${submission.submissionId}`);
    assert.equal((await listPage(f, site.key)).items, [submission]);
  });

  t("form: multipart posts work the same; a file is 415; an empty file input is ignored", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const form = new FormData();
    form.append("_key", site.publishableKey);
    form.append("popupId", "contact");
    form.append("message", "Hello\r\nthere ✓");
    const reply = await post(f, fromPage(SHOP, { body: form, headers: { accept: "application/json" } }));
    assert.equal(created(reply).data, { message: "Hello\r\nthere ✓" });

    const withFile = new FormData();
    withFile.append("_key", site.publishableKey);
    withFile.append("popupId", "contact");
    withFile.append("cv", new Blob(["%PDF-1.7"], { type: "application/pdf" }), "cv.pdf");
    expectError(await post(f, fromPage(SHOP, { body: withFile })), 415, "Form field cv is a file; file uploads are not supported");

    // What a browser sends for a file input left empty: a part with filename="" and no content.
    const boundary = "----formsink-test-boundary";
    const raw = [
      `--${boundary}`, 'Content-Disposition: form-data; name="_key"', "", site.publishableKey,
      `--${boundary}`, 'Content-Disposition: form-data; name="popupId"', "", "contact",
      `--${boundary}`, 'Content-Disposition: form-data; name="email"', "", "a@example.com",
      `--${boundary}`, 'Content-Disposition: form-data; name="cv"; filename=""', "Content-Type: application/octet-stream", "", "",
      `--${boundary}--`, "",
    ].join("\r\n");
    const empty = await post(f, fromPage(SHOP, { body: raw, headers: { "content-type": `multipart/form-data; boundary=${boundary}`, accept: "application/json" } }));
    assert.equal(created(empty).data, { email: "a@example.com" });
    assert.is(await totalOf(f, site.key), 2);
  });

  t("form: a browser (Accept: text/html) gets a small thank-you page with a link back", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const reply = await post(f, formPost([["_key", site.publishableKey], ["popupId", "p"], ["email", "a@example.com"]], SHOP, {
      accept: BROWSER_ACCEPT, referer: `${SHOP}/landing?x="<b>&copy;=1`,
    }));
    assert.is(reply.status, 201);
    assert.match(reply.headers.get("content-type") ?? "", /^text\/html; charset=utf-8/);
    assert.match(reply.text, /<h1>Thank you!<\/h1>/);
    assert.ok(reply.text.includes('href="https://shop.example.com/landing?x=%22%3Cb%3E&#38;copy;=1"'), reply.text);
    assert.not.match(reply.text, /<script/i);
    assert.match(reply.headers.get("content-security-policy") ?? "", /default-src 'none'/);
    // never a link to a page off the key's domains
    const elsewhere = await post(f, formPost([["_key", site.publishableKey], ["popupId", "p"]], SHOP, { accept: BROWSER_ACCEPT, referer: "https://evil.test/" }));
    assert.match(elsewhere.text, /Thank you!/);
    assert.not.match(elsewhere.text, /<a /);
    assert.is(await totalOf(f, site.key), 2);
    // scripts and curl (*/* or no Accept) get JSON
    for (const accept of ["*/*", "application/json", "application/json, text/html;q=0.9"]) {
      created(await post(f, formPost([["_key", site.publishableKey], ["popupId", "p"]], SHOP, { accept })));
    }
    created(await post(f, formPost([["_key", site.publishableKey], ["popupId", "p"]])));
  });

  t("form: _redirect on the key's domains is a 303 there; anywhere else is 400 and stores nothing", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const thanks = "https://a.brand.test/thanks?from=popup#top";
    const reply = await post(f, formPost([["_key", site.publishableKey], ["popupId", "p"], ["email", "a@example.com"], ["_redirect", thanks]], SHOP, { accept: BROWSER_ACCEPT }));
    assert.is(reply.status, 303, reply.text);
    assert.is(reply.headers.get("location"), thanks);
    assert.is(await totalOf(f, site.key), 1);
    for (const target of [
      "https://evil.test/thanks", "https://shop.example.com.evil.test/", "//evil.test/x", "/thanks", "javascript:alert(1)",
      "data:text/html,hi", "https://app.example.org/thanks", "not a url", "ftp://shop.example.com/thanks",
    ]) {
      const refused = await post(f, formPost([["_key", site.publishableKey], ["popupId", "p"], ["_redirect", target]]));
      expectError(refused, 400, "_redirect must be an absolute http(s) URL on one of the key's domains");
    }
    // a secret key (a server posting a form) lists no domains, so it cannot redirect either
    const fromServer = await post(f, { key: site.key, body: `popupId=p&_redirect=${encodeURIComponent(`${SHOP}/x`)}`, headers: { "content-type": URLENCODED } });
    expectError(fromServer, 400, /_redirect/);
    assert.is(await totalOf(f, site.key), 1);
  });

  t("form: a secret key in a form field or a URL is refused with 401, and nothing is stored", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const secretMessage = /^Secret keys are accepted only in the x-api-key header/;
    expectError(await post(f, formPost([["_key", site.key], ["popupId", "p"]])), 401, secretMessage);
    // refused as leaked even when it is not a valid key
    expectError(await post(f, formPost([["_key", `fs_sk_AAAAAAAAAAAA_${"A".repeat(40)}`], ["popupId", "p"]])), 401, secretMessage);
    for (const query of [`_key=${site.key}`, `apiKey=${site.key}`, `key=${encodeURIComponent(site.key)}`]) {
      expectError(await f.call("POST", `/api/submission?${query}`, formPost([["popupId", "p"]])), 401, secretMessage);
      expectError(await f.call("GET", `/api/submission?${query}`, { key: site.key }), 401, secretMessage);
    }
    // with the secret key rightly in the header, a copy in a field is still refused
    expectError(await post(f, { key: site.key, ...formPost([["_key", site.key], ["popupId", "p"]], undefined) }), 401, secretMessage);
    // a publishable key belongs in a form field or the header, not the URL
    expectError(await f.call("POST", `/api/submission?_key=${site.publishableKey}`, formPost([["popupId", "p"]])), 400, /not in the URL/);
    // a field and a header naming different keys
    const other = await createApiKey(f.store, { account: "elsewhere", kind: "publishable", domains: ["shop.example.com"] });
    f.keys.push(other.key);
    expectError(await post(f, { key: other.key, ...formPost([["_key", site.publishableKey], ["popupId", "p"]]) }), 400, /different keys/);
    assert.is(await totalOf(f, site.key), 0);
    // the same key in both is fine (a script posting a form's own fields)
    created(await post(f, { key: site.publishableKey, ...formPost([["_key", site.publishableKey], ["popupId", "p"]]) }));
    expectError(await post(f, formPost([["popupId", "p"]])), 401, "API key is required");
    expectError(await post(f, formPost([["_key", ""], ["popupId", "p"]])), 401, "API key is required");
  });

  t("form: bad form bodies are a precise 4xx, and nothing is stored", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const key = `_key=${site.publishableKey}`;
    const bad: [what: string, body: string, status: number, message: RegExp][] = [
      ["a broken escape", `${key}&popupId=p&email=%E0%A4%A`, 400, /Form field 3 is not valid URL-encoded UTF-8/],
      ["an escape that is not UTF-8", `${key}&popupId=p&name=%FF`, 400, /not valid URL-encoded UTF-8/],
      ["an escaped lone surrogate", `${key}&popupId=p&name=%ED%A0%80`, 400, /not valid URL-encoded UTF-8/],
      ["popupId missing", `${key}&email=a`, 400, /popupId/],
      ["popupId twice", `${key}&popupId=a&popupId=b`, 400, /popupId must be given at most once/],
      ["_redirect twice", `${key}&popupId=p&_redirect=${SHOP}&_redirect=${SHOP}`, 400, /_redirect must be given at most once/],
      ["_key twice", `${key}&${key}&popupId=p`, 400, /_key must be given at most once/],
      ["101 fields", `${key}&popupId=p&${Array.from({ length: 101 }, (_, i) => `f${i}=1`).join("&")}`, 400, /at most 100 fields/],
      ["a field name of 129 characters", `${key}&popupId=p&${"k".repeat(129)}=1`, 400, /128/],
      ["a reserved field name", `${key}&popupId=p&constructor=x`, 400, /reserved/],
      ["a popupId of 257 characters", `${key}&popupId=${"p".repeat(257)}`, 400, /popupId/],
    ];
    for (const [what, body, status, message] of bad) {
      const text = expectError(await post(f, formPost(body)), status);
      assert.match(text, message, `${what}: ${text}`);
    }
    const encoded = (headers: Record<string, string>) => post(f, formPost(`${key}&popupId=p`, SHOP, headers));
    expectError(await encoded({ "content-type": `${URLENCODED}; charset=iso-8859-1` }), 415, /charset must be utf-8/);
    expectError(await encoded({ "content-encoding": "gzip" }), 415, /Content-Encoding gzip/);
    expectError(await post(f, formPost(`${key}&popupId=p&big=${"x".repeat(64 * 1024)}`)), 413);
    const part = (name: string, value: string) => `--b\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const multipart: [what: string, body: string | Uint8Array<ArrayBuffer>, contentType: string, message: RegExp][] = [
      ["no boundary parameter", `${part("popupId", "p")}--b--`, "multipart/form-data", /has no boundary/],
      ["a boundary that never occurs", "--x\r\nnonsense", "multipart/form-data; boundary=y", /boundary never occurs/],
      ["no closing boundary", `${part("popupId", "p")}${part("email", "a")}`, "multipart/form-data; boundary=b", /before its closing boundary/],
      ["a part without a name", `--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--`, "multipart/form-data; boundary=b", /has no name/],
      ["a part without Content-Disposition", `--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--`, "multipart/form-data; boundary=b", /no Content-Disposition/],
      [
        "a value that is not UTF-8",
        new Uint8Array([...new TextEncoder().encode(`${part("popupId", "p")}--b\r\nContent-Disposition: form-data; name="name"\r\n\r\n`), 0xff, ...new TextEncoder().encode("\r\n--b--")]),
        "multipart/form-data; boundary=b", /^Form field name is not valid UTF-8$/,
      ],
    ];
    for (const [what, body, contentType, message] of multipart) {
      const text = expectError(await post(f, fromPage(SHOP, { key: site.publishableKey, body, headers: { "content-type": contentType } })), 400);
      assert.match(text, message, `${what}: ${text}`);
    }
    // and one that is well formed, with a quoted boundary, passes
    const quoted = await post(f, fromPage(SHOP, { key: site.publishableKey, body: `${part("popupId", "p")}${part("a", "1")}--b--\r\n`, headers: { "content-type": 'multipart/form-data; boundary="b"', accept: "application/json" } }));
    assert.equal(created(quoted).data, { a: "1" });
    const unknownType = await post(f, fromPage(SHOP, { key: site.publishableKey, body: "popupId=p", headers: { "content-type": "text/plain" } }));
    expectError(unknownType, 415, "Content-Type must be application/json, application/x-www-form-urlencoded or multipart/form-data");
    assert.is(await totalOf(f, site.key), 1);
  });

  t("honeypot: a filled _gotcha gets the answer of a success and stores nothing", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const fields = (gotcha: string): [string, string][] => [["_key", site.publishableKey], ["popupId", "p"], ["email", "bot@spam.test"], ["_gotcha", gotcha]];
    const json = await post(f, formPost(fields("http://spam.test"), SHOP, { accept: "application/json" }));
    assert.is(created(json).data.email, "bot@spam.test");
    const page = await post(f, formPost(fields("x"), SHOP, { accept: BROWSER_ACCEPT }));
    assert.is(page.status, 201);
    assert.match(page.text, /Thank you!/);
    const redirected = await post(f, formPost([...fields("x"), ["_redirect", `${SHOP}/thanks`]]));
    assert.is(redirected.status, 303);
    assert.is(redirected.headers.get("location"), `${SHOP}/thanks`);
    const fromScript = await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: { email: "bot@spam.test" }, _gotcha: "filled" } }));
    created(fromScript);
    assert.is(await totalOf(f, site.key), 0);
    // an empty honeypot is a person: stored
    created(await post(f, formPost(fields(""))));
    created(await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {}, _gotcha: "" } })));
    assert.is(await totalOf(f, site.key), 2);
    expectError(await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {}, _gotcha: 1 } })), 400, /^_gotcha must be a string/);
  });

  t.run();
}

function rateLimitSuite(target: string, start: StartHttpTarget, createStore: CreateStore): void {
  // The client address comes from a test header here: the `clientAddress` option a deployment
  // behind a proxy uses, and the same on every target.
  const limited = withFixture(`${target}: rate limits`, start, createStore, {
    rateLimit: { publishable: { limit: 3, windowSeconds: 60 } },
    clientAddress: (request) => request.headers.get("x-test-client") ?? undefined,
  });
  const t = limited.t;

  const send = (f: Fixture, site: Site, client: string, key = site.publishableKey) =>
    post(f, fromPage(SHOP, { key, json: { popupId: "p", data: {} }, headers: { "x-test-client": client } }));

  t("rate limit: a publishable key gets its limit per client address, then 429 with Retry-After and RateLimit fields", async () => {
    const f = limited.fixture();
    const site = await f.site(DOMAINS);
    await roomInWindow(60, 10_000);
    for (let i = 1; i <= 3; i++) {
      const reply = await send(f, site, "203.0.113.7");
      assert.is(reply.status, 201, reply.text);
      assert.is(reply.headers.get("ratelimit-policy"), '"publishable";q=3;w=60');
      const [, remaining, reset] = /^"publishable";r=(\d+);t=(\d+)$/.exec(reply.headers.get("ratelimit") ?? "") ?? [];
      assert.is(Number(remaining), 3 - i, reply.headers.get("ratelimit") ?? "no RateLimit field");
      assert.ok(Number(reset) >= 1 && Number(reset) <= 60);
    }
    const refused = await send(f, site, "203.0.113.7");
    expectError(refused, 429, /^Too many submissions: at most 3 every 60 seconds; try again in \d+ seconds?$/);
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers.get("retry-after")}`);
    assert.match(refused.headers.get("ratelimit") ?? "", new RegExp(`^"publishable";r=0;t=${retryAfter}$`));
    assert.is(refused.headers.get("ratelimit-policy"), '"publishable";q=3;w=60');
    assert.is(refused.headers.get("access-control-allow-origin"), "*");
    assert.is(await totalOf(f, site.key), 3);
  });

  t("rate limit: every client address and every key has its own budget; an IPv6 /64 is one client", async () => {
    const f = limited.fixture();
    const site = await f.site(DOMAINS);
    await roomInWindow(60, 10_000);
    for (let i = 0; i < 3; i++) assert.is((await send(f, site, "2001:db8:1:2::1")).status, 201);
    expectError(await send(f, site, "2001:db8:1:2:ffff::9"), 429);
    assert.is((await send(f, site, "2001:db8:1:3::1")).status, 201, "another /64");
    assert.is((await send(f, site, "198.51.100.1")).status, 201, "another address");
    const other = await f.site(DOMAINS);
    assert.is((await send(f, other, "2001:db8:1:2::1")).status, 201, "another key");
  });

  t("rate limit: secret keys have no limit by default", async () => {
    const f = limited.fixture();
    const site = await f.site(DOMAINS);
    for (let i = 0; i < 6; i++) {
      const reply = await post(f, { key: site.key, json: { popupId: "p", data: {} }, headers: { "x-test-client": "192.0.2.1" } });
      assert.is(reply.status, 201);
      assert.is(reply.headers.get("ratelimit"), null);
    }
  });

  t.run();

  const defaults = withFixture(`${target}: rate limits with default settings`, start, createStore, {
    rateLimit: { publishable: { limit: 3, windowSeconds: 60 }, secret: { limit: 2, windowSeconds: 10 } },
  });
  defaults.t("rate limit: X-Forwarded-For is not believed unless the deployment says so", async () => {
    const f = defaults.fixture();
    const site = await f.site(DOMAINS);
    await roomInWindow(60, 10_000);
    for (let i = 0; i < 3; i++) {
      assert.is((await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {} }, headers: { "x-forwarded-for": `198.51.100.${i}` } }))).status, 201);
    }
    const spoofed = await post(f, fromPage(SHOP, { key: site.publishableKey, json: { popupId: "p", data: {} }, headers: { "x-forwarded-for": "198.51.100.99" } }));
    expectError(spoofed, 429);
  });
  defaults.t("rate limit: a policy for secret keys applies when one is set", async () => {
    const f = defaults.fixture();
    const site = await f.site(DOMAINS);
    await roomInWindow(10, 5_000);
    for (let i = 0; i < 2; i++) assert.is((await post(f, { key: site.key, json: { popupId: "p", data: {} } })).status, 201);
    const refused = await post(f, { key: site.key, json: { popupId: "p", data: {} } });
    expectError(refused, 429, /at most 2 every 10 seconds/);
    assert.is(refused.headers.get("ratelimit-policy"), '"secret";q=2;w=10');
    assert.ok(Number(refused.headers.get("retry-after")) <= 10);
  });
  defaults.t.run();
}

function idempotencySuite(target: string, start: StartHttpTarget, createStore: CreateStore): void {
  const { t, fixture } = withFixture(`${target}: Idempotency-Key`, start, createStore);

  const withKey = (key: string, options: CallOptions, idempotencyKey: string): CallOptions => ({
    ...options, key, headers: { ...options.headers, "idempotency-key": idempotencyKey },
  });

  t("idempotency: a retry with the same key and body gets the first answer: same id, same status, stored once", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const request = withKey(site.publishableKey, fromPage(SHOP, { json: { popupId: "p", data: { email: "a@example.com" } } }), "4f1f9d6f-retry-1");
    const first = await post(f, request);
    const submission = created(first);
    assert.is(first.headers.get("idempotent-replayed"), null);
    const retry = await post(f, request);
    assert.is(retry.status, 201);
    assert.equal(expectSubmission(retry.json), submission);
    assert.is(retry.headers.get("idempotent-replayed"), "true");
    assert.is(retry.headers.get("location"), first.headers.get("location"));
    // what was answered first, even after the submission moved on
    await f.call("PATCH", `/api/submission/${submission.submissionId}`, { key: site.key, json: { status: "completed" } });
    assert.equal(expectSubmission((await post(f, request)).json), submission);
    assert.equal((await listPage(f, site.key)).items.map((s) => s.submissionId), [submission.submissionId]);
  });

  t("idempotency: a form post retried gets the same redirect, and stores once", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const request = { ...formPost([["_key", site.publishableKey], ["popupId", "p"], ["_redirect", `${SHOP}/thanks`]]) };
    request.headers = { ...request.headers, "idempotency-key": "form-retry" };
    for (let i = 0; i < 2; i++) {
      const reply = await post(f, request);
      assert.is(reply.status, 303);
      assert.is(reply.headers.get("location"), `${SHOP}/thanks`);
    }
    assert.is(await totalOf(f, site.key), 1);
  });

  t("idempotency: the same key with another body is 422, and stores nothing more", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    created(await post(f, withKey(site.key, { json: { popupId: "p", data: { n: 1 } } }, "reused")));
    const reused = await post(f, withKey(site.key, { json: { popupId: "p", data: { n: 2 } } }, "reused"));
    expectError(reused, 422, /already used for a different request body/);
    const asForm = await post(f, withKey(site.key, { body: "popupId=p&n=1", headers: { "content-type": URLENCODED } }, "reused"));
    expectError(asForm, 422);
    assert.is(await totalOf(f, site.key), 1);
  });

  t("idempotency: keys are per API key: a publishable key, which anyone may use, neither gets a secret key's answer nor claims its keys", async () => {
    const f = fixture();
    const site = await f.site(DOMAINS);
    const body = { json: { popupId: "p", data: { email: "a@example.com" } } };
    const first = created(await post(f, withKey(site.key, body, "order-1")));
    const fromPageReply = await post(f, withKey(site.publishableKey, fromPage(SHOP, body), "order-1"));
    assert.is(fromPageReply.headers.get("idempotent-replayed"), null);
    assert.is.not(created(fromPageReply).submissionId, first.submissionId);
    // a key claimed from a page first does not make the server's request with it a 422
    created(await post(f, withKey(site.publishableKey, fromPage(SHOP, { json: { popupId: "p", data: { n: 1 } } }), "order-2")));
    created(await post(f, withKey(site.key, { json: { popupId: "p", data: { n: 2 } } }, "order-2")));
    // each key's own retry is still answered from its first request
    const retried = await post(f, withKey(site.key, body, "order-1"));
    assert.is(retried.headers.get("idempotent-replayed"), "true");
    assert.is(created(retried).submissionId, first.submissionId);
    assert.is(await totalOf(f, site.key), 4);
  });

  t("idempotency: keys are per account; concurrent retries store one; a malformed key is 400", async () => {
    const f = fixture();
    const one = await f.site(DOMAINS);
    const two = await f.site(DOMAINS);
    const body = { json: { popupId: "p", data: { same: true } } };
    const a = created(await post(f, withKey(one.key, body, "shared-key")));
    const b = created(await post(f, withKey(two.key, body, "shared-key")));
    assert.is.not(a.submissionId, b.submissionId);

    const racing = await Promise.all(Array.from({ length: 6 }, () => post(f, withKey(one.key, { json: { popupId: "p", data: { n: 7 } } }, "racing"))));
    const ids = new Set(racing.map((reply) => created(reply).submissionId));
    assert.is(ids.size, 1);
    assert.is(await totalOf(f, one.key), 2);

    for (const bad of ["x".repeat(256), "has space", "tab\there"]) {
      expectError(await post(f, withKey(one.key, body, bad)), 400, /^Idempotency-Key must be 1 to 255 visible ASCII characters/);
    }
    created(await post(f, withKey(one.key, body, "k".repeat(255))));
    assert.is(await totalOf(f, one.key), 3);
  });

  t.run();
}
