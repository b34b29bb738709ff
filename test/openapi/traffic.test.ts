/**
 * The whole HTTP suite against a real Node server, every exchange checked against the OpenAPI
 * document by a validator nobody here wrote (openapi-backend, with Ajv and ajv-formats):
 * - every response must fit the operation's documented status, media type, body and headers;
 * - a request the validator flags must have been answered with a documented 4xx (the suite sends
 *   many wrong requests on purpose);
 * - a request it accepts but the server refused must be refused for a rule the document states
 *   in words (JSON Schema cannot say "at most 100 data fields"): each such rule is listed below.
 * openapi-backend validates a body against one media type's schema (JSON's when there are
 * several), so each exchange is checked against the document narrowed to the media types it
 * actually used.
 */
import addFormats from "ajv-formats";
import { type Document, OpenAPIBackend } from "openapi-backend";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { serve } from "../../adapters/node.ts";
import { createSubmissionsHandler } from "../../src/handler.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { overSocket } from "../http/over-socket.ts";
import { httpSuite, type StartHttpTarget } from "../http/suite.ts";

interface Exchange {
  method: string;
  /** The path under the API's base path, and the query string without `?`. */
  path: string;
  query: string;
  requestHeaders: Record<string, string>;
  requestBody: Uint8Array | undefined;
  status: number;
  responseHeaders: Record<string, string>;
  /** Unset for streamed exports, which the suite may cancel part way. */
  responseText?: string;
}

const exchanges: Exchange[] = [];

/** The Node server over a socket, with every request and answer written down on the way. */
const recording: StartHttpTarget = async (handler) => {
  const target = await overSocket(serve)(handler);
  return {
    async send(request) {
      const url = new URL(request.url);
      const requestBody = request.body === null ? undefined : new Uint8Array(await request.clone().arrayBuffer());
      const response = await target.send(request);
      const exchange: Exchange = {
        method: request.method,
        path: url.pathname,
        query: url.search.slice(1),
        requestHeaders: Object.fromEntries(request.headers),
        requestBody,
        status: response.status,
        responseHeaders: Object.fromEntries(response.headers),
      };
      exchanges.push(exchange);
      if (!/^(text\/csv|application\/x-ndjson)/.test(response.headers.get("content-type") ?? "")) exchange.responseText = await response.clone().text();
      return response;
    },
    stop: target.stop,
  };
};

httpSuite("node server, recorded for the OpenAPI validator", recording, { createStore: () => createLibsqlStore({ url: ":memory:" }) });

/**
 * Why the server may refuse a request the document's schemas accept: each is a rule the
 * document states in a description, matched by the message that names it.
 */
const RULES_IN_WORDS: [rule: string, message: RegExp][] = [
  ["data limits (CreateSubmission.data's description)", /^data(\.\S+)? |^data has more than \d+ fields|^data key/],
  ["nesting deeper than data may be, text that is not valid Unicode (400's description)", /is nested more than \d+ levels deep|not valid Unicode \(a lone surrogate\)/],
  ["at most so many CSV columns (the export's description)", /too many CSV columns/],
  ["a known query parameter given twice or empty (400's description)", /must be given at most once|must not be empty/],
  ["a real calendar date (the instant's description)", /must be an ISO 8601 instant/],
  ["malformed JSON or a body that is not an object (400's description)", /^Request body (is not valid JSON|must be a JSON object)|^Malformed JSON/],
  ["form encoding (400's description: a body value outside its constraint)", /is not valid URL-encoded UTF-8|is not valid UTF-8|^Request body is not valid multipart\/form-data|must be given at most once/],
  ["_redirect on the key's domains (the _redirect field's description)", /_redirect/],
  ["_key and x-api-key name one key (the _key field's description)", /_key field and the x-api-key header/],
  ["keys never in the URL (the operation's description)", /not in the URL/],
  ["Idempotency-Key text (its description)", /^Idempotency-Key must be/],
  ["erasure only by an identifying field (the erasure's description)", /^field must be one of the identifying fields/],
  ["a cursor from an earlier answer, not with offset, for the same filters and order (cursor's description)", /^offset and cursor cannot|^cursor (is not a cursor this API made|was made for other filters)/],
  ["a webhook URL is https unless the deployment allows private webhooks (createWebhook's description)", /^url is refused \(.*\): this deployment delivers webhooks only to https URLs of public addresses/],
];

const t = suite("OpenAPI: a third-party validator over the HTTP suite's traffic");

t("every response fits the document; every request it flags got a documented 4xx; every other refusal is a stated rule", async () => {
  const documentResponse = await createSubmissionsHandler(createMemoryStore())(new Request("http://formsink.test/api/openapi.json"));
  const document = (await documentResponse.json()) as Document;
  const validators = new Map<string, Promise<OpenAPIBackend>>();
  const validatorFor = (requestType: string | undefined, responseType: string | undefined) => {
    const key = `${requestType}|${responseType}`;
    if (!validators.has(key)) validators.set(key, makeValidator(narrowed(document, requestType, responseType)));
    return validators.get(key)!;
  };

  const problems: string[] = [];
  const counts = { exchanges: 0, flaggedRequests: 0, refusedByRule: 0, outsideTheApi: 0 };
  assert.ok(exchanges.length > 500, `the suite ran: ${exchanges.length} exchanges`);
  for (const exchange of exchanges) {
    counts.exchanges++;
    const requestType = mediaTypeOf(exchange.requestHeaders["content-type"]);
    const responseType = mediaTypeOf(exchange.responseHeaders["content-type"]);
    const api = await validatorFor(requestType, responseType);
    const where = `${exchange.method} ${exchange.path}${exchange.query ? `?${exchange.query}` : ""} -> ${exchange.status}`.slice(0, 200);
    const apiPath = exchange.path.replace(/^.*?(?=\/api\/)/, "");
    const request = { method: exchange.method, path: apiPath, query: exchange.query, headers: exchange.requestHeaders, body: await bodyOf(exchange, requestType) };
    const operation = api.matchOperation(request);
    const message = messageOf(exchange);

    if (!operation || message === "Not found") {
      // No operation: a path or method the API does not have, or a path outside the mount.
      counts.outsideTheApi++;
      if (!(exchange.status === 404 || (exchange.status === 405 && exchange.responseHeaders.allow))) problems.push(`${where}: no documented operation, yet not 404/405`);
      continue;
    }

    const documented = (operation.responses as Record<string, unknown>)[String(exchange.status)];
    if (!documented) {
      problems.push(`${where}: status ${exchange.status} is not documented for ${operation.operationId}`);
      continue;
    }

    const requestCheck = api.validateRequest(request, operation);
    // openapi-backend refuses query parameters an operation does not list; the document says
    // they are ignored, which OpenAPI allows: that one finding is not a violation here.
    requestCheck.errors = requestCheck.errors?.filter((error) => !(error.instancePath === "/query" && error.keyword === "additionalProperties")) ?? null;
    requestCheck.valid = !requestCheck.errors?.length;
    const undocumentedType = requestType !== undefined && operation.requestBody !== undefined && !(requestType in (operation.requestBody as { content: object }).content);
    if (!requestCheck.valid || undocumentedType) {
      counts.flaggedRequests++;
      if (exchange.status < 400 || exchange.status >= 500) problems.push(`${where}: the validator flags the request (${summary(requestCheck.errors) || `media type ${requestType}`}), yet it was answered ${exchange.status}`);
    } else if (exchange.status === 400) {
      const rule = RULES_IN_WORDS.find(([, pattern]) => pattern.test(message ?? ""));
      if (rule) counts.refusedByRule++;
      else problems.push(`${where}: the validator accepts the request, the server answered 400 ${JSON.stringify(message)}, and no rule in the document's words says why`);
    }

    if (exchange.status !== 204 && exchange.status !== 303 && responseType === undefined) problems.push(`${where}: no Content-Type`);
    if (exchange.responseText !== undefined && responseType !== undefined) {
      const body = responseType === "application/json" ? JSON.parse(exchange.responseText) : exchange.responseText;
      const bodyCheck = api.validateResponse(body, operation, exchange.status);
      if (!bodyCheck.valid) problems.push(`${where}: response body: ${summary(bodyCheck.errors)}: ${exchange.responseText.slice(0, 120)}`);
    }
    const headerCheck = api.validateResponseHeaders(exchange.responseHeaders, operation, { statusCode: exchange.status });
    if (!headerCheck.valid) problems.push(`${where}: response headers: ${summary(headerCheck.errors)}`);
  }
  assert.equal(problems.slice(0, 40), [], `${problems.length} violations in ${counts.exchanges} exchanges`);
  // The suite's deliberate mistakes are there, and were recognised as such.
  assert.ok(counts.flaggedRequests > 50, `${counts.flaggedRequests} requests flagged`);
  assert.ok(counts.refusedByRule > 5, `${counts.refusedByRule} refusals by rules stated in words`);
});

t.run();

/** The document with only the media types one exchange used, so a validator that reads one schema reads that one. */
function narrowed(document: Document, requestType: string | undefined, responseType: string | undefined): Document {
  const copy = structuredClone(document) as unknown as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> }; responses: Record<string, { content?: Record<string, unknown> }> }>>; components: { responses: Record<string, { content?: Record<string, unknown> }> } };
  const keep = (content: Record<string, unknown> | undefined, type: string | undefined) => {
    if (!content || type === undefined || !(type in content)) return content;
    return { [type]: content[type] };
  };
  for (const byMethod of Object.values(copy.paths)) {
    for (const operation of Object.values(byMethod)) {
      if (operation.requestBody) operation.requestBody.content = keep(operation.requestBody.content, requestType)!;
      for (const response of Object.values(operation.responses)) if (response.content) response.content = keep(response.content, responseType);
    }
  }
  return copy as unknown as Document;
}

async function makeValidator(definition: Document): Promise<OpenAPIBackend> {
  // quick: the definition is not checked against the OpenAPI 3.0 schema this library carries (the
  // document is 3.1; Redocly validates it in openapi.test.ts); the validators are the same.
  const api = new OpenAPIBackend({ definition, quick: true, customizeAjv: (ajv) => addFormats(ajv as never) as never });
  await api.init();
  return api;
}

function mediaTypeOf(header: string | undefined): string | undefined {
  return header?.split(";")[0]!.trim().toLowerCase() || undefined;
}

function messageOf(exchange: Exchange): string | undefined {
  try {
    return (JSON.parse(exchange.responseText ?? "") as { message?: string }).message;
  } catch {
    return undefined;
  }
}

/** The body as the validator takes it: JSON parsed, form fields as an object, else the text. */
async function bodyOf(exchange: Exchange, type: string | undefined): Promise<unknown> {
  const bytes = exchange.requestBody;
  if (bytes === undefined || bytes.byteLength === 0) return undefined;
  const text = new TextDecoder().decode(bytes);
  if (type === "application/json") {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (type === "application/x-www-form-urlencoded" || type === "multipart/form-data") {
    try {
      const form = await new Response(bytes, { headers: { "content-type": exchange.requestHeaders["content-type"]! } }).formData();
      const fields: Record<string, unknown> = {};
      for (const [name, value] of form) {
        // A file part is a string of bytes to OpenAPI 3.1; formsink refuses files with 415.
        const field = typeof value === "string" ? value : await value.text();
        fields[name] = name in fields ? [fields[name], field].flat() : field;
      }
      return fields;
    } catch {
      return text;
    }
  }
  return text;
}

function summary(errors: { instancePath?: string; message?: string }[] | null | undefined): string {
  return (errors ?? []).map((error) => `${error.instancePath ?? ""} ${error.message ?? ""}`.trim()).join("; ");
}
