/**
 * The OpenAPI 3.1 document of the API, generated from the route table and the very arktype
 * schemas the handler validates with, so the two cannot drift (test/http/openapi.test.ts
 * checks the document against the router and validates it).
 */
import type { JsonSchema } from "arktype";
import { lengthBoundsOf } from "./code-points.ts";
import type { Limits } from "./options.ts";
import { type Content, type ErrorStatus, type HeaderDoc, RATE_LIMIT_HEADERS, type Route, type SchemaRef, type SchemaSource } from "./routes/route.ts";
import * as schemaModule from "./schemas.ts";
import {
  createSubmissionBody, createWebhookBody, deleteResult, erasureBody, erasureReceipt, errorBody, retentionPreview, retentionRules, statusUpdateBody,
  statusUpdateResult, submission, submissionId, submissionList, updateWebhookBody, webhook, webhookWithSecret,
} from "./schemas.ts";

/** The version of the HTTP contract this document describes (not the package's version). */
export const API_VERSION = "1.0.0";

type JsonObject = { [key: string]: unknown };

/** Schemas named once under `components/schemas` and referenced wherever they appear whole. */
const COMPONENT_SCHEMAS: Record<string, SchemaSource> = {
  Submission: submission,
  SubmissionList: submissionList,
  CreateSubmission: createSubmissionBody,
  StatusUpdate: statusUpdateBody,
  StatusUpdateResult: statusUpdateResult,
  DeleteResult: deleteResult,
  Error: errorBody,
  Erasure: erasureBody,
  ErasureReceipt: erasureReceipt,
  RetentionRules: retentionRules,
  RetentionPreview: retentionPreview,
  Webhook: webhook,
  WebhookWithSecret: webhookWithSecret,
  CreateWebhook: createWebhookBody,
  UpdateWebhook: updateWebhookBody,
};

const LENGTH_NOTE = "String lengths count characters (Unicode code points), as JSON Schema's minLength and maxLength do: an emoji counts as 1.";

const HONEYPOT_DESCRIPTION = "The honeypot: a field people leave empty; when filled in, nothing is stored (the answer is the same)";

const ERROR_RESPONSES: Record<ErrorStatus, { name: string; description: (limits: Limits) => string; headers?: Record<string, HeaderDoc> }> = {
  400: {
    name: "BadRequest",
    description: () =>
      "Malformed JSON, a form body that is not valid URL-encoded or multipart UTF-8, text that is not valid Unicode (a lone surrogate), a query or body value outside its constraint, an unknown body field, a body nested deeper than its data may be, or a known query parameter given twice or empty. The message names the parameter or field.",
  },
  401: {
    name: "Unauthorized",
    description: () =>
      "`x-api-key` is missing (`API key is required`, with a pointer to `x-api-key` when an `Authorization` header came instead), or unknown or revoked (`Invalid API key`), or a secret key came outside the header.",
  },
  403: { name: "Forbidden", description: () => "The key is valid but may not do this (a publishable key on a secret operation)." },
  404: {
    name: "NotFound",
    description: () =>
      "No such submission (`Submission not found`), erasure receipt (`Erasure not found`), webhook (`Webhook not found`) or delivery in this account; ids that cannot exist are 404 too.",
  },
  409: {
    name: "Conflict",
    description: () => "The account already has as many webhook endpoints as the deployment allows (20 by default): delete one first.",
  },
  410: {
    name: "Gone",
    description: () => "The events cursor is outside the events kept (older than them, or ahead of the account's log): export afresh and continue from a new cursor (the message says how).",
  },
  413: { name: "PayloadTooLarge", description: (limits) => `The body is larger than ${limits.maxBodyBytes} bytes.` },
  422: {
    name: "UnprocessableContent",
    description: () => "The Idempotency-Key was already used with a different body (or media type): use a new key for a new submission.",
  },
  429: {
    name: "TooManyRequests",
    description: () => "Rate limited (creates with a publishable key): `Retry-After` says when to try again; `RateLimit` and `RateLimit-Policy` describe the limit.",
    headers: {
      "Retry-After": { description: "Seconds until the window ends and creates are counted anew", schema: { type: "string", pattern: "^[1-9]\\d*$" } },
      ...RATE_LIMIT_HEADERS,
    },
  },
  415: { name: "UnsupportedMediaType", description: () => "The body is not in a media type the operation takes (JSON in UTF-8; forms for creates), or it is compressed." },
  500: {
    name: "InternalError",
    description: () =>
      "Anything unexpected: `Internal server error`; details only in the server log. In a host app that read the request body before formsink (a body parser mounted first), the message says so.",
  },
  501: {
    name: "NotImplemented",
    description: () =>
      "The deployment's store keeps no erasure receipts or retention rules (a custom store without `PrivacyStore`), or no webhooks (without `WebhookStore`).",
  },
};

const PATH_PARAMETER_DESCRIPTIONS: Record<string, string> = {
  submissionId: "The submission's id. Matched case-insensitively; anything that is not a UUID is a 404 like any unknown id.",
  erasureId: "The erasure receipt's id, from the answer of `POST /api/erasure`.",
  webhookId: "The endpoint's id (`wh_...`), from the answer of `POST /api/webhooks`.",
  eventId: "The event's id (`webhook-id` of its deliveries), from the delivery log or `GET /api/events`.",
};

const QUERY_PARAMETER_DESCRIPTIONS: Record<string, string> = {
  limit: "Page size.",
  offset: "Items to skip. Not with `cursor`.",
  cursor:
    "`nextCursor` of an earlier list answer, with the same filters and orderBy: the list's page (or, for the export, every match) right after that page, at the cost of the first page however deep, never repeating or skipping an item while others are created or deleted. Not with `offset`; a malformed cursor, or one made for other filters or another order, is 400.",
  popupId: "Only submissions of this popup.",
  domain: "Only submissions made on this domain.",
  device: "Only submissions of this device type.",
  status: "Only submissions (or deliveries) with this status.",
  orderBy: "`created_at` is oldest first, `created_at_desc` newest first; ties are broken by submissionId in the same direction.",
  createdAfter: "Only submissions created strictly after this instant (exclusive).",
  createdBefore: "Only submissions created strictly before this instant (exclusive).",
  format: "`csv` (RFC 4180, a header row, one column per top-level field and one `data.<key>` column per distinct data key) or `ndjson` (one Submission per line).",
};

export interface OpenApiOptions {
  basePath: string;
  limits: Limits;
}

/** The document for `routes` as mounted under `basePath` with these `limits`. */
export function openApiDocument(routes: readonly Route[], { basePath, limits }: OpenApiOptions): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  const schemas = Object.fromEntries(Object.entries(COMPONENT_SCHEMAS).map(([name, schema]) => [name, jsonSchema(schema)]));
  const createProperties = (schemas.CreateSubmission as { properties: Record<string, JsonObject> }).properties;
  createProperties.data!.description = dataDescription(limits);
  createProperties._gotcha!.description = HONEYPOT_DESCRIPTION;
  return {
    openapi: "3.1.0",
    info: {
      title: "formsink",
      version: API_VERSION,
      description:
        "Form submissions collected from website popups. Every operation but this document and the CORS preflight takes an API key in `x-api-key` (a publishable key may only create, from its own domains); a key sees only its own account's submissions. " +
        "Every error is `{\"message\": string}` naming the parameter or field. A known path with another method answers 405 with an `Allow` header. " +
        "Keys never go in URLs: a query parameter `_key` or `x-api-key` is 400, a secret key anywhere in the query 401. Query parameters an operation does not list are ignored. Query integers are written in digits only (`limit=10`, not `10.0` or `1e1`), so they are documented as strings with a pattern. " +
        LENGTH_NOTE,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: basePath === "" ? "/" : basePath, description: "where this document was served" }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "A secret key (`fs_sk_...`) from `formsink keys create`. Publishable keys (`fs_pk_...`) may only create.",
        },
      },
      schemas,
      responses: Object.fromEntries(
        Object.values(ERROR_RESPONSES).map(({ name, description, headers: headerDocs }) => [
          name,
          {
            description: description(limits),
            ...(headerDocs ? { headers: headers(headerDocs) } : {}),
            content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
          },
        ]),
      ),
    },
  };
}

function operation(route: Route): JsonObject {
  const { doc } = route;
  const parameters = [
    ...[...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      description: PATH_PARAMETER_DESCRIPTIONS[name!],
      schema: name === "submissionId" ? jsonSchema(submissionId) : { type: "string" },
    })),
    ...(doc.query ? queryParameters(resolve(doc.query)) : []),
    ...Object.entries(doc.headers ?? {}).map(([name, header]) => ({ name, in: "header", required: false, ...header })),
  ];
  const responses: Record<string, JsonObject> = {};
  for (const [status, response] of Object.entries(doc.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.content ? { content: content(response.content) } : {}),
      ...(response.headers ? { headers: headers(response.headers) } : {}),
    };
  }
  for (const status of doc.errors) responses[status] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    ...(route.access === "public" ? { security: [] } : {}),
    // A form post may carry a publishable key in its `_key` field instead of the header, and a
    // form field is no OpenAPI security location: the form body's schema documents it.
    ...(route.access === "create" ? { security: [{ apiKey: [] }, {}] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body ? { requestBody: { required: true, content: content(doc.body) } } : {}),
    responses,
  };
}

function content(byMediaType: Content): JsonObject {
  return Object.fromEntries(Object.entries(byMediaType).map(([mediaType, schema]) => [mediaType, { schema: schemaOrRef(schema) }]));
}

function headers(byName: Record<string, HeaderDoc>): JsonObject {
  return Object.fromEntries(Object.entries(byName).map(([name, header]) => [name, { ...header }]));
}

/**
 * The fields of a create posted as a form, from the JSON body's schema: `popupId` as there,
 * the control fields, and any other field, as text, going into `data`.
 */
function formFields(body: SchemaSource): SchemaSource {
  return {
    toJsonSchema: (options) => {
      const json = body.toJsonSchema(options) as { properties: Record<string, JsonSchema> };
      return {
        type: "object",
        properties: {
          popupId: json.properties.popupId!,
          _key: {
            type: "string",
            description: "A publishable key (`fs_pk_...`), for forms without JavaScript: required unless the `x-api-key` header is sent (then the two must agree). A secret key here is refused.",
          },
          _redirect: { type: "string", description: "An absolute http(s) URL on one of the key's domains: the answer is a 303 to it" },
          _gotcha: { type: "string", description: HONEYPOT_DESCRIPTION },
        },
        required: ["popupId"],
        additionalProperties: {
          description: "Any other field is a data field; a name sent more than once (checkboxes) keeps every value, as a list",
          anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
        },
      };
    },
  };
}

function queryParameters(query: SchemaSource): JsonObject[] {
  const schema = jsonSchema(query) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) ?? false,
    ...(QUERY_PARAMETER_DESCRIPTIONS[name] ? { description: QUERY_PARAMETER_DESCRIPTIONS[name] } : {}),
    schema: property,
  }));
}

function schemaOrRef(given: SchemaRef | JsonSchema): JsonObject {
  if (!isSchemaRef(given)) return given as JsonObject;
  const schema = resolve(given);
  const name = Object.entries(COMPONENT_SCHEMAS).find(([, component]) => component === schema)?.[0];
  return name ? { $ref: `#/components/schemas/${name}` } : jsonSchema(schema);
}

function isSchemaRef(schema: SchemaRef | JsonSchema): schema is SchemaRef {
  return typeof (schema as Partial<SchemaRef>).schemaName === "string";
}

function resolve({ schemaName, form }: SchemaRef): SchemaSource {
  const schema: SchemaSource = schemaModule[schemaName];
  return form ? formFields(schema) : schema;
}

/**
 * JSON Schema of an arktype schema, as it applies on the wire:
 * - a query integer (`limit=10` becomes a number) is its text: digits only, so a string whose
 *   pattern admits exactly the digits the handler takes; other parsed values (an instant) are
 *   described by the text they are parsed from;
 * - a length counted in code points (see code-points.ts) is a minLength/maxLength, which count
 *   the same; other checks JSON Schema cannot express (a real calendar date, "an object but not
 *   an array") are left to the description, and the base type still holds;
 * - enumerations and constants of strings say `type: string`, which generators need.
 */
function jsonSchema(schema: SchemaSource): JsonObject {
  const generated = schema.toJsonSchema({
    dialect: null,
    fallback: {
      morph: (ctx: { base: JsonSchema; out: JsonSchema | null }) => queryInteger(ctx.base, ctx.out) ?? ctx.base,
      predicate: (ctx: { base: JsonSchema; predicate: unknown }) => ({ ...ctx.base, ...lengthBoundsOf(ctx.predicate) }),
    },
  }) as JsonObject;
  return annotate(generated);
}

function queryInteger(base: JsonSchema, out: JsonSchema | null): JsonObject | undefined {
  const text = base as JsonObject, number = out as JsonObject | null;
  if (text.pattern !== "^\\d+$" || number?.type !== "integer") return undefined;
  const [minimum, maximum] = [number.minimum, number.maximum] as [number, number];
  return {
    type: "string",
    pattern: wholeNumberPattern(minimum, maximum),
    description: `A whole number from ${minimum} to ${maximum}, written in digits (leading zeros allowed)`,
  };
}

/**
 * A pattern for the decimal digits of the whole numbers `minimum` (0 or 1) to `maximum`, with
 * any leading zeros, as the handler reads them: one alternative per length below `maximum`'s,
 * and one per digit of `maximum` for the numbers of its length.
 */
export function wholeNumberPattern(minimum: 0 | 1 | number, maximum: number): string {
  if (minimum !== 0 && minimum !== 1) throw new RangeError("only ranges from 0 or 1 are written as patterns");
  const top = String(maximum);
  const digits = (count: number) => (count === 0 ? "" : count === 1 ? "\\d" : `\\d{${count}}`);
  const upTo = (count: number) => (count === 0 ? "" : count === 1 ? "\\d?" : `\\d{0,${count}}`);
  const below = top.length > 1 ? [`[1-9]${upTo(top.length - 2)}`] : [];
  const sameLength = [...top].map((digit, i) => {
    const lowest = i === 0 ? 1 : 0;
    const highest = Number(digit) - 1;
    if (highest < lowest) return undefined;
    return `${top.slice(0, i)}${highest === lowest ? lowest : `[${lowest}-${highest}]`}${digits(top.length - i - 1)}`;
  });
  const positive = [...below, ...sameLength.filter((part) => part !== undefined), top].join("|");
  return minimum === 0 ? `^(?:0+|0*(?:${positive}))$` : `^0*(?:${positive})$`;
}

function annotate(node: JsonObject): JsonObject {
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach((item) => isObject(item) && annotate(item));
    else if (isObject(value)) annotate(value);
  }
  const values = Array.isArray(node.enum) ? node.enum : "const" in node ? [node.const] : undefined;
  if (node.type === undefined && values?.every((value) => typeof value === "string")) node.type = "string";
  return node;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null;
}

function dataDescription(limits: Limits): string {
  return (
    `What the visitor submitted, as key/value pairs. At most ${limits.maxDataFields} fields counted at every depth, ` +
    `keys 1 to ${limits.maxDataKeyLength} characters, nesting at most ${limits.maxDataDepth} levels (data itself is level 1), ` +
    "numbers finite; the keys `__proto__`, `constructor` and `prototype` are refused anywhere."
  );
}
