/**
 * The OpenAPI document against the router and against the handler's behaviour: it must pass
 * Redocly's validator and strict recommended rules, list exactly the routes of the router, and
 * its parameter, body and response schemas must say what the handler does (checked with Ajv on
 * the same values sent to the handler).
 */
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { Ajv2020 } from "ajv/dist/2020.js";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler, ROUTES } from "../../src/handler.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { addWebhook } from "../../src/webhook-endpoints.ts";

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: { type?: string } & Record<string, unknown>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: object }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: object }> }>;
  security?: unknown[];
}
type Document = {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; responses: Record<string, object> };
};

const ORIGIN = "http://formsink.test";

async function fixture(basePath = "") {
  const store = createMemoryStore();
  const { key, record } = await createApiKey(store, { account: "openapi" });
  const handler = createSubmissionsHandler(store, { basePath });
  const response = await handler(new Request(`${ORIGIN}${basePath}/api/openapi.json`));
  assert.is(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  const text = await response.text();
  const { webhook } = await addWebhook(store, record.accountId, { url: "https://hooks.example.com/in" }, { maxWebhooks: 20, allowPrivateWebhooks: false });
  return { store, key, accountId: record.accountId, webhookId: webhook.webhookId, handler, text, doc: JSON.parse(text) as Document };
}

/** A documented path with its parameters filled in: a submission that may not exist, the fixture's webhook. */
function pathOf(path: string, ids: { submissionId?: string; webhookId: string; eventId?: string }): string {
  return path
    .replace("{submissionId}", ids.submissionId ?? "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11")
    .replace("{webhookId}", ids.webhookId)
    .replace("{eventId}", ids.eventId ?? "evt_00000000000000000000000000000000");
}

function operations(doc: Document): [method: string, path: string, operation: Operation][] {
  return Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]): [string, string, Operation] => [method.toUpperCase(), path, operation]),
  );
}

/** A validator for schemas inside the document, with its `$ref`s resolved against it. */
function schemaValidator(doc: Document) {
  const ajv = new Ajv2020({ strict: true, validateFormats: false, allErrors: true });
  const rooted = <T>(schema: T): T => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"doc#/$defs/')) as T;
  ajv.addSchema({ $id: "doc", $defs: rooted(doc.components.schemas) });
  return (schema: object, value: unknown): boolean => ajv.validate(rooted(schema), value);
}

const t = suite("openapi.json");

t("is served without a key and passes Redocly's validator with the strict recommended rules", async () => {
  const { text } = await fixture();
  const config = await createConfig({
    extends: ["recommended-strict"],
    // The document itself has no 4xx to answer; every keyed operation's 4xx are checked below.
    rules: { "operation-4xx-response": "off" },
  });
  const problems = await lintFromString({ source: text, absoluteRef: "openapi.json", config });
  assert.equal(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`), []);
});

t("lists exactly the routes of the router, each answered by the handler", async () => {
  const { doc, handler, key } = await fixture();
  const documented = operations(doc).map(([method, path]) => `${method} ${path}`).sort();
  const routed = ROUTES.map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`).sort();
  assert.equal(documented, routed);
  assert.is(new Set(operations(doc).map(([, , op]) => op.operationId)).size, ROUTES.length, "operationIds are unique");
  for (const [method, path] of operations(doc)) {
    const url = `${ORIGIN}${path.replace("{submissionId}", "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11")}`;
    const response = await handler(new Request(url, { method, headers: { "x-api-key": key } }));
    const body = await response.text();
    assert.not.ok(response.status === 405 || body === '{"message":"Not found"}', `${method} ${path} is not routed: ${response.status} ${body}`);
  }
});

t("every keyed operation documents 401 and the x-api-key scheme; the document and the CORS preflight need no key; a create may do without the header", async () => {
  const { doc } = await fixture();
  const publicRoutes = ROUTES.filter((route) => route.access === "public").map((route) => `${route.method} ${route.path}`);
  assert.equal(publicRoutes.sort(), ["GET /api/health", "GET /api/openapi.json", "OPTIONS /api/submission"]);
  for (const [method, path, operation] of operations(doc)) {
    if (publicRoutes.includes(`${method} ${path}`)) {
      assert.equal(operation.security, [], `${method} ${path} needs no key`);
      continue;
    }
    if (operation.operationId === "createSubmission") {
      // the form post's `_key` field, documented in the form body's schema
      assert.equal(operation.security, [{ apiKey: [] }, {}]);
      const form = operation.requestBody!.content["application/x-www-form-urlencoded"]!.schema as { properties: Record<string, { description: string }> };
      assert.match(form.properties._key!.description, /required unless the `x-api-key` header is sent/);
    } else {
      assert.is(operation.security, undefined, `${method} ${path} uses the document's security`);
    }
    assert.ok(operation.responses["401"], `${method} ${path} documents 401`);
    assert.ok(operation.responses["500"], `${method} ${path} documents 500`);
  }
  assert.equal((doc as unknown as { security: unknown }).security, [{ apiKey: [] }]);
});

t("servers names the base path it is mounted under", async () => {
  assert.equal((await fixture()).doc.servers, [{ url: "/", description: "where this document was served" }]);
  assert.equal((await fixture("/forms")).doc.servers, [{ url: "/forms", description: "where this document was served" }]);
});

/** Query values the handler takes or refuses, per parameter, for every query route. */
const QUERY_SAMPLES: Record<string, string[]> = {
  limit: ["1", "100", "007", "0", "101", "1e1", "10.0", " 5", "", "-1", "ten"],
  offset: ["0", "5", "9007199254740991", "9007199254740992", "-1", "1.5", "0x1", ""],
  popupId: ["p", "p".repeat(256), "p".repeat(257), "", "é".repeat(256)],
  domain: ["example.com", "d".repeat(512), "d".repeat(513), ""],
  device: ["x", "mobile", "x".repeat(128), "x".repeat(129), ""],
  status: ["pending", "completed", "succeeded", "failed", "done", "PENDING", ""],
  orderBy: ["created_at", "created_at_desc", "created", "createdAt", ""],
  format: ["csv", "ndjson", "xml", "CSV", ""],
  cursor: ["0", "12", "123456789012345", "1234567890123456", "-1", "abc", "1.5", ""],
  after: ["0", "12", "123456789012345", "1234567890123456", "-1", "abc", "1.5", ""],
  type: ["submission.created", "submission.created,submission.deleted", "submission.status_changed", "submission.made", "submissionXcreated", "submission.created,", ""],
};

t("query parameters: the document's schema accepts a value exactly when the handler does", async () => {
  const { doc, handler, key, webhookId } = await fixture();
  const accepts = schemaValidator(doc);
  let compared = 0;
  for (const [, path, operation] of operations(doc)) {
    for (const parameter of operation.parameters?.filter((p) => p.in === "query") ?? []) {
      assert.is(parameter.required, false, `${parameter.name} is optional`);
      // instants are checked against the calendar, which JSON Schema leaves to `format`
      if (parameter.name === "createdAfter" || parameter.name === "createdBefore") {
        assert.is(parameter.schema.format, "date-time");
        continue;
      }
      // opaque: only the handler can read one (the HTTP suite's cursor cases check its 400s)
      if (parameter.name === "cursor") {
        assert.is(parameter.schema.type, "string");
        continue;
      }
      const samples = QUERY_SAMPLES[parameter.name];
      assert.ok(samples, `no samples for ${parameter.name}`);
      for (const value of samples) {
        const url = `${ORIGIN}${pathOf(path, { webhookId })}?${parameter.name}=${encodeURIComponent(value)}`;
        const response = await handler(new Request(url, { headers: { "x-api-key": key } }));
        await response.body?.cancel();
        // a query value is text, and every query parameter is documented as a string
        assert.is(parameter.schema.type, "string", parameter.name);
        // a well-formed events cursor past this account's log is the log's 410 (events.md), not a malformed value
        const taken = response.status === 200 || (parameter.name === "after" && response.status === 410);
        assert.is(accepts(parameter.schema, value), taken, `${path} ${parameter.name}=${JSON.stringify(value).slice(0, 40)}: handler ${response.status}`);
        compared++;
      }
    }
  }
  assert.ok(compared > 60, `${compared} comparisons`);
});

t("query parameters: defaults are the handler's", async () => {
  const { doc, handler, key } = await fixture();
  const list = doc.paths["/api/submission"]!.get!;
  const defaults = Object.fromEntries((list.parameters ?? []).filter((p) => "default" in p.schema).map((p) => [p.name, p.schema.default]));
  assert.equal(defaults, { limit: "10", offset: "0", orderBy: "created_at_desc" });
  const page = (await (await handler(new Request(`${ORIGIN}/api/submission`, { headers: { "x-api-key": key } }))).json()) as object;
  assert.equal({ ...page, items: undefined, total: undefined }, { items: undefined, total: undefined, limit: 10, offset: 0, nextCursor: null });
  const exportDefaults = doc.paths["/api/submission/export"]!.get!.parameters!.find((p) => p.name === "format")!.schema.default;
  assert.is(exportDefaults, "csv");
});

t("request bodies: the document's schema accepts a body exactly when the handler does", async () => {
  const { doc, handler, key, store, accountId, webhookId } = await fixture();
  const accepts = schemaValidator(doc);
  const existing = crypto.randomUUID();
  await store.insertSubmission(accountId, {
    submissionId: existing, popupId: "p", data: {}, domain: "", userAgent: "", device: "unknown", status: "pending", createdAt: new Date().toISOString(),
  });
  const bodies: Record<string, unknown[]> = {
    "POST /api/submission": [
      { popupId: "p", data: { a: 1 } },
      { popupId: "p", data: {}, domain: "example.com", device: "mobile", userAgent: "u".repeat(1024) },
      { popupId: "p", data: {}, userAgent: "u".repeat(1025) },
      { popupId: "", data: {} },
      { popupId: "p".repeat(257), data: {} },
      { data: {} },
      { popupId: "p" },
      { popupId: "p", data: [] },
      { popupId: "p", data: "x" },
      { popupId: "p", data: {}, device: "phone" },
      { popupId: "p", data: {}, domain: "" },
      { popupId: "p", data: {}, status: "completed" },
      { popupId: 5, data: {} },
    ],
    "PATCH /api/submission/{submissionId}": [
      { status: "completed" }, { status: "pending" }, { status: "done" }, {}, { status: "completed", popupId: "x" }, { status: null },
    ],
    "POST /api/webhooks": [
      { url: "https://crm.example.com/hooks" },
      { url: "https://crm.example.com/hooks", types: ["submission.created", "submission.deleted"], popupId: "p", description: "CRM" },
      { url: `https://crm.example.com/${"h".repeat(2048 - 25)}` },
      { url: `https://crm.example.com/${"h".repeat(2048 - 24)}` },
      { url: "crm.example.com/hooks" },
      { url: "ftp://crm.example.com/hooks" },
      { url: "https://crm.example.com/hooks", types: [] },
      { url: "https://crm.example.com/hooks", types: ["submission.made"] },
      { url: "https://crm.example.com/hooks", popupId: "" },
      { url: "https://crm.example.com/hooks", popupId: null },
      { url: "https://crm.example.com/hooks", enabled: false },
      { url: "https://crm.example.com/hooks", secret: "whsec_mine" },
      { types: ["submission.created"] },
    ],
    "PATCH /api/webhooks/{webhookId}": [
      {}, { enabled: false }, { enabled: true }, { types: null, popupId: null, description: null }, { types: ["submission.status_changed"] },
      { url: "https://crm.example.com/other" }, { url: "mailto:someone@example.com" }, { enabled: "no" }, { url: null }, { types: [] }, { webhookId: "wh_x" },
    ],
    "POST /api/webhooks/{webhookId}/replay": [
      { since: "2025-07-12T10:30:00Z" }, { since: "2025-07-12T10:30:00.123+02:00" }, {}, { since: 1752316200000 }, { since: "2025-07-12T10:30:00Z", until: "now" },
    ],
  };
  for (const [operationKey, samples] of Object.entries(bodies)) {
    const [method, path] = operationKey.split(" ") as [string, string];
    const schema = doc.paths[path]![method.toLowerCase()]!.requestBody!.content["application/json"]!.schema;
    for (const body of samples) {
      const response = await handler(
        new Request(`${ORIGIN}${pathOf(path, { submissionId: existing, webhookId })}`, {
          method, headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body),
        }),
      );
      assert.is(accepts(schema, body), response.status < 300, `${operationKey} ${JSON.stringify(body).slice(0, 60)}: handler ${response.status} ${await response.text()}`);
    }
  }
});

t("responses: what the handler answers fits the schema the document gives for it", async () => {
  const { doc, handler, key, webhookId, store, accountId } = await fixture();
  const accepts = schemaValidator(doc);
  const call = async (method: string, path: string, body?: object) => {
    const response = await handler(new Request(`${ORIGIN}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
      body: body && JSON.stringify(body),
    }));
    return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() };
  };
  const check = (method: string, path: string, reply: { status: number; type: string; text: string }) => {
    const responses = doc.paths[path]![method.toLowerCase()]!.responses;
    const documented = responses[String(reply.status)];
    assert.ok(documented, `${method} ${path} answered ${reply.status}, which is not documented`);
    const response = documented.$ref ? doc.components.responses[documented.$ref.split("/").at(-1)!] as typeof documented : documented;
    const mediaType = Object.keys(response.content ?? {}).find((type) => reply.type.startsWith(type.split(";")[0]!));
    assert.ok(mediaType, `${method} ${path} ${reply.status} answered ${reply.type}`);
    const schema = response.content![mediaType]!.schema;
    if (mediaType === "application/x-ndjson") {
      // a string whose description names the Submission schema of each line
      assert.ok(accepts(schema, reply.text));
      assert.match(String((schema as { description?: string }).description), /one Submission \(#\/components\/schemas\/Submission\) per line/);
      for (const line of reply.text.trim().split("\n")) assert.ok(accepts({ $ref: "#/components/schemas/Submission" }, JSON.parse(line)), line);
      return;
    }
    const value = mediaType === "text/csv" ? reply.text : JSON.parse(reply.text);
    assert.ok(accepts(schema, value), `${method} ${path} ${reply.status}: ${reply.text.slice(0, 200)}`);
  };
  const created = await call("POST", "/api/submission", { popupId: "p", data: { email: "a@example.com", nested: { list: [1, null] } } });
  check("POST", "/api/submission", created);
  const id = (JSON.parse(created.text) as { submissionId: string }).submissionId;
  await call("POST", "/api/submission", { popupId: "p", data: {} });
  const item = `/api/submission/${id}`;
  const cases: [string, string, string, object?][] = [
    ["GET", "/api/submission", "/api/submission"],
    ["GET", "/api/submission", "/api/submission?limit=0"],
    ["GET", "/api/submission/export", "/api/submission/export?format=ndjson"],
    ["GET", "/api/submission/export", "/api/submission/export"],
    ["GET", "/api/submission/export", "/api/submission/export?format=xml"],
    ["GET", "/api/submission/{submissionId}", item],
    ["GET", "/api/submission/{submissionId}", "/api/submission/not-an-id"],
    ["PATCH", "/api/submission/{submissionId}", item, { status: "completed" }],
    ["PATCH", "/api/submission/{submissionId}", item, { status: "x" }],
    ["DELETE", "/api/submission/{submissionId}", item],
    ["DELETE", "/api/submission/{submissionId}", item],
    ["POST", "/api/submission", "/api/submission", { data: {} }],
  ];
  const hook = `/api/webhooks/${webhookId}`;
  const [delivered] = await store.claimDeliveries({ now: Date.now(), limit: 1, leaseMs: 1000, owner: "test" });
  await store.recordDeliveryAttempt({
    accountId, webhookId, position: delivered!.position, owner: "test", at: Date.now(), durationMs: 3, statusCode: 500, error: "the receiver answered 500",
    status: "pending", nextAttemptAt: Date.now() + 60_000,
  });
  cases.push(
    ["POST", "/api/webhooks", "/api/webhooks", { url: "https://crm.example.com/hooks", types: ["submission.created"], description: "CRM" }],
    ["POST", "/api/webhooks", "/api/webhooks", { url: "http://crm.example.com/hooks" }],
    ["GET", "/api/webhooks", "/api/webhooks"],
    ["GET", "/api/webhooks/{webhookId}", hook],
    ["GET", "/api/webhooks/{webhookId}", "/api/webhooks/wh_missing"],
    ["PATCH", "/api/webhooks/{webhookId}", hook, { enabled: false, popupId: "p" }],
    ["PATCH", "/api/webhooks/{webhookId}", hook, { enabled: true }],
    ["POST", "/api/webhooks/{webhookId}/rotate-secret", `${hook}/rotate-secret`],
    ["GET", "/api/webhooks/{webhookId}", hook],
    ["GET", "/api/webhooks/{webhookId}/deliveries", `${hook}/deliveries`],
    ["GET", "/api/webhooks/{webhookId}/deliveries", `${hook}/deliveries?status=pending&limit=1`],
    ["GET", "/api/webhooks/{webhookId}/deliveries", `${hook}/deliveries?status=lost`],
    ["POST", "/api/webhooks/{webhookId}/deliveries/{eventId}/retry", `${hook}/deliveries/${delivered!.eventId}/retry`],
    ["POST", "/api/webhooks/{webhookId}/deliveries/{eventId}/retry", `${hook}/deliveries/evt_missing/retry`],
    ["POST", "/api/webhooks/{webhookId}/replay", `${hook}/replay`, { since: "2025-07-12T10:30:00Z" }],
    ["DELETE", "/api/webhooks/{webhookId}", hook],
    ["DELETE", "/api/webhooks/{webhookId}", hook],
  );
  for (const [method, path, url, body] of cases) check(method, path, await call(method, url, body));
  const unauthorized = await handler(new Request(`${ORIGIN}/api/submission`));
  check("GET", "/api/submission", { status: unauthorized.status, type: unauthorized.headers.get("content-type") ?? "", text: await unauthorized.text() });
});

t("string lengths count code points in the document and in the handler alike", async () => {
  const { doc, handler, key } = await fixture();
  const accepts = schemaValidator(doc);
  const popupId = doc.paths["/api/submission"]!.get!.parameters!.find((p) => p.name === "popupId")!;
  assert.is(popupId.schema.maxLength, 256);
  for (const [value, status] of [["😀".repeat(256), 200], ["😀".repeat(257), 400]] as const) {
    const response = await handler(new Request(`${ORIGIN}/api/submission?popupId=${encodeURIComponent(value)}`, { headers: { "x-api-key": key } }));
    await response.body?.cancel();
    assert.is(response.status, status);
    assert.is(accepts(popupId.schema, value), status === 200);
  }
});

t("the create documents 422 for a reused Idempotency-Key, and the key's pattern is the handler's", async () => {
  const { doc, handler, key } = await fixture();
  const accepts = schemaValidator(doc);
  const create = doc.paths["/api/submission"]!.post!;
  assert.equal(create.responses["422"], { $ref: "#/components/responses/UnprocessableContent" });
  const header = create.parameters!.find((p) => p.name === "Idempotency-Key")!;
  const post = (idempotencyKey: string, popupId: string) =>
    handler(new Request(`${ORIGIN}/api/submission`, {
      method: "POST", headers: { "x-api-key": key, "content-type": "application/json", "idempotency-key": idempotencyKey }, body: JSON.stringify({ popupId, data: {} }),
    }));
  for (const idempotencyKey of ["k", "k".repeat(255), "k".repeat(256), "a b", "clé", "a\tb", "0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c11"]) {
    const status = (await post(idempotencyKey, "p")).status;
    assert.is(accepts(header.schema, idempotencyKey), status === 201, `${JSON.stringify(idempotencyKey).slice(0, 20)}: ${status}`);
  }
  assert.is((await post("k", "another body")).status, 422);
});

t("documented answer headers: 429's Retry-After and RateLimit fields, the preflight's CORS fields with their values", async () => {
  const { doc, handler } = await fixture();
  const tooMany = doc.components.responses.TooManyRequests as { headers: Record<string, unknown> };
  assert.equal(Object.keys(tooMany.headers).sort(), ["RateLimit", "RateLimit-Policy", "Retry-After"]);
  const preflight = doc.paths["/api/submission"]!.options!.responses["204"] as unknown as { headers: Record<string, { schema: { const: string } }> };
  const response = await handler(new Request(`${ORIGIN}/api/submission`, { method: "OPTIONS", headers: { origin: "https://shop.example", "access-control-request-method": "POST" } }));
  assert.is(response.status, 204);
  for (const [name, { schema }] of Object.entries(preflight.headers)) assert.is(response.headers.get(name), schema.const, name);
  assert.ok(Object.keys(preflight.headers).length >= 4);
});

t("types generators need: enums and constants are strings, _gotcha is declared in JSON, the document's own route is an object", async () => {
  const { doc } = await fixture();
  const text = JSON.stringify(doc);
  for (const match of text.matchAll(/\{[^{}]*"(enum|const)":[^{}]*\}/g)) assert.match(match[0], /"type":"string"/, match[0]);
  const create = doc.components.schemas.CreateSubmission as { properties: Record<string, { type: string }>; additionalProperties: boolean };
  assert.is(create.properties._gotcha!.type, "string");
  assert.is(create.additionalProperties, false);
  const own = doc.paths["/api/openapi.json"]!.get!.responses["200"]!.content!["application/json"]!.schema as { required: string[] };
  assert.equal(own.required, ["openapi", "info", "paths"]);
});

t.run();
