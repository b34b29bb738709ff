import { Router } from "itty-router";
import type { Authenticate } from "./auth/principal.ts";
import { authenticateWithStore } from "./auth/store-authenticate.ts";
import { HttpError, toErrorResponse } from "./http/errors.ts";
import { createSubmissionIdGenerator } from "./id.ts";
import { DEFAULT_LIMITS, type SubmissionsHandlerOptions } from "./options.ts";
import { type ConnectionInfo, connectionAddress } from "./rate-limit/client-address.ts";
import { rateLimitSettings } from "./rate-limit/settings.ts";
import { type Access, requireKey } from "./routes/access.ts";
import type { RequestContext, RouteHandler, RouteRequest } from "./routes/context.ts";
import { allowCrossOrigin, answerPreflight } from "./routes/cors.ts";
import { limitCreateRate } from "./routes/rate-limit.ts";
import {
  createSubmission, deleteSubmission, getSubmission, listSubmissions, updateSubmissionStatus,
} from "./routes/submissions.ts";
import type { SubmissionStore } from "./store.ts";

type Method = "GET" | "POST" | "PATCH" | "DELETE" | "OPTIONS";

interface Route {
  method: Method;
  path: string;
  access: Access;
  handle: RouteHandler;
  /** Answers (errors included) are readable by any web page: the path a browser posts to. */
  crossOrigin?: boolean;
  /** Counted against the key's rate limit, per client address. */
  rateLimited?: boolean;
}

/** Every route of the API, in one table: where a newcomer looks first. */
export const ROUTES: readonly Route[] = [
  { method: "GET", path: "/api/submission", access: "secret", handle: listSubmissions },
  { method: "POST", path: "/api/submission", access: "create", handle: createSubmission, crossOrigin: true, rateLimited: true },
  { method: "OPTIONS", path: "/api/submission", access: "public", handle: answerPreflight, crossOrigin: true },
  { method: "GET", path: "/api/submission/:submissionId", access: "secret", handle: getSubmission },
  { method: "PATCH", path: "/api/submission/:submissionId", access: "secret", handle: updateSubmissionStatus },
  { method: "DELETE", path: "/api/submission/:submissionId", access: "secret", handle: deleteSubmission },
];

/**
 * A Fetch handler. `connection` is what the adapter knows about where the request came from;
 * without it (or its `clientAddress`), rate limits count every client as one.
 */
export type SubmissionsHandler = (request: Request, connection?: ConnectionInfo) => Promise<Response>;

/**
 * The whole API as one Fetch handler: give it a store, mount it anywhere that speaks
 * `Request`/`Response` (Node via `formsink/node`, Bun, Deno, Workers, a Hono or Next.js route).
 */
export function createSubmissionsHandler(store: SubmissionStore, options: SubmissionsHandlerOptions = {}): SubmissionsHandler {
  const basePath = normalizeBasePath(options.basePath ?? "");
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const rateLimits = rateLimitSettings(options.rateLimit);
  const authenticate: Authenticate = options.authenticate ?? authenticateWithStore(store);
  const clientAddress = options.clientAddress ?? connectionAddress;
  const log = options.log;
  const newSubmissionId = createSubmissionIdGenerator();

  const router = Router<RouteRequest, [RequestContext], Response>({ base: basePath });
  for (const route of ROUTES) {
    const steps: RouteHandler[] = [
      ...(route.crossOrigin ? [allowCrossOrigin] : []),
      ...(route.access === "public" ? [] : [requireKey(authenticate, route.access)]),
      ...(route.rateLimited ? [limitCreateRate] : []),
    ];
    router[route.method.toLowerCase() as Lowercase<Method>](route.path, ...steps, route.handle);
  }
  for (const [path, methods] of methodsByPath(ROUTES)) {
    router.all(path, () => {
      throw new HttpError(405, `Method not allowed; use ${methods.join(", ")}`, { allow: methods.join(", ") });
    });
  }

  return async (request, connection = {}) => {
    const started = performance.now();
    const url = new URL(request.url);
    const context: RequestContext = {
      store, limits, rateLimits, basePath, url, newSubmissionId,
      clientAddress: clientAddress(request, connection),
      responseHeaders: new Headers(),
    };
    let response: Response;
    try {
      response = (await router.fetch(request as RouteRequest, context)) ?? toErrorResponse(new HttpError(404, "Not found"));
    } catch (error) {
      if (!(error instanceof HttpError)) log?.({ type: "error", method: request.method, path: url.pathname, error });
      response = toErrorResponse(error);
    }
    context.responseHeaders.forEach((value, name) => response.headers.set(name, value));
    log?.({
      type: "request",
      method: request.method,
      path: url.pathname,
      status: response.status,
      durationMs: performance.now() - started,
    });
    return response;
  };
}

function methodsByPath(routes: readonly Route[]): Map<string, Method[]> {
  const byPath = new Map<string, Method[]>();
  for (const { path, method } of routes) byPath.set(path, [...(byPath.get(path) ?? []), method]);
  return byPath;
}

function normalizeBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed !== "" && !trimmed.startsWith("/")) {
    throw new TypeError(`basePath must start with "/" (got "${basePath}")`);
  }
  return trimmed;
}
