import type { JsonSchema } from "arktype";
import type * as Schemas from "../schemas.ts";
import type { Access } from "./access.ts";
import type { KeyedContext, RouteHandler } from "./context.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** Anything arktype can describe as JSON Schema: the schemas the handler validates with. */
export interface SchemaSource {
  toJsonSchema(options?: object): JsonSchema;
}

/** The schemas of src/schemas.ts, by their exported names. */
export type SchemaName = { [Name in keyof typeof Schemas]: (typeof Schemas)[Name] extends SchemaSource ? Name : never }[keyof typeof Schemas];

/**
 * A schema of src/schemas.ts named in the route table, which the OpenAPI document (src/openapi.ts)
 * resolves when it is built: the table does not load arktype and the schemas, so a server that
 * only answers routes without them (a list, a get) never does. `form`: the fields of the schema
 * posted as a form (`formFields` there).
 */
export interface SchemaRef {
  readonly schemaName: SchemaName;
  readonly form?: true;
}

export function schemaRef(schemaName: SchemaName, form?: "as form"): SchemaRef {
  return form === undefined ? { schemaName } : { schemaName, form: true };
}

/** The statuses an operation can answer with an error, each described once in the document. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 501;

/** Media type to schema: one of src/schemas.ts, or plain JSON Schema for what has none. */
export type Content = Record<string, SchemaRef | JsonSchema>;

export interface HeaderDoc {
  description: string;
  schema: JsonSchema;
}

/** What the OpenAPI document says about a route; `src/openapi.ts` turns it into an operation. */
export interface RouteDoc {
  operationId: string;
  summary: string;
  description?: string;
  /** The query schema the route validates with; each of its keys is a query parameter. */
  query?: SchemaRef;
  /** Request headers the route reads. */
  headers?: Record<string, HeaderDoc>;
  /** The request body schemas the route validates with, by media type. */
  body?: Content;
  /** The answers that are not errors, by status. */
  responses: Record<number, { description: string; content?: Content; headers?: Record<string, HeaderDoc> }>;
  errors: readonly ErrorStatus[];
}

export const RATE_LIMIT_HEADERS: Record<string, HeaderDoc> = {
  RateLimit: {
    description: "On creates with a rate-limited key: the requests left in the current window and the seconds until it ends (draft-ietf-httpapi-ratelimit-headers), such as `\"publishable\";r=29;t=60`",
    schema: { type: "string" },
  },
  "RateLimit-Policy": {
    description: "On creates with a rate-limited key: the limit and the window in seconds, such as `\"publishable\";q=30;w=60`",
    schema: { type: "string" },
  },
};

interface RouteEntry {
  method: Method;
  path: string;
  /** Answers (errors included) are readable by any web page: the path a browser posts to. */
  crossOrigin?: boolean;
  doc: RouteDoc;
}

/** A route of the table: a handler for secret keys is told whom the key acts for. */
export type Route = RouteEntry & (
  | { access: "secret"; handle: RouteHandler<KeyedContext> }
  | { access: "create" | "public"; handle: RouteHandler }
);
