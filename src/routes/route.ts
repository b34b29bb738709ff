import type { JsonSchema } from "arktype";
import type { Access } from "./access.ts";
import type { KeyedContext, RouteHandler } from "./context.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** Anything arktype can describe as JSON Schema: the schemas the handler validates with. */
export interface SchemaSource {
  toJsonSchema(options?: object): JsonSchema;
}

/** The statuses an operation can answer with an error, each described once in the document. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 501;

/** Media type to schema: an arktype schema, or plain JSON Schema for what has none. */
export type Content = Record<string, SchemaSource | JsonSchema>;

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
  query?: SchemaSource;
  /** Request headers the route reads. */
  headers?: Record<string, HeaderDoc>;
  /** The request body schemas the route validates with, by media type. */
  body?: Content;
  /** The answers that are not errors, by status. */
  responses: Record<number, { description: string; content?: Content; headers?: Record<string, HeaderDoc> }>;
  errors: readonly ErrorStatus[];
}

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
