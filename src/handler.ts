import { type IRequest, Router } from "itty-router";
import { withoutApiKeys } from "./auth/api-key.ts";
import type { Authenticate } from "./auth/principal.ts";
import { authenticateWithStore } from "./auth/store-authenticate.ts";
import { MAX_CSV_DATA_COLUMNS } from "./export/limits.ts";
import { type Answer, toResponse } from "./http/answer.ts";
import { HttpError, toErrorAnswer } from "./http/errors.ts";
import { type ApiRequest, fromFetchRequest } from "./http/request.ts";
import { plainPathOf } from "./http/plain-path.ts";
import { requestIdOf } from "./http/request-id.ts";
import { createSubmissionIdGenerator } from "./id.ts";
import { DEFAULT_HEALTH_TIMEOUT_MS, handlerLimits, type Limits, mayHaveChanged, type SubmissionsHandlerOptions } from "./options.ts";
import { type ConnectionInfo, connectionAddress } from "./rate-limit/client-address.ts";
import { rateLimitSettings } from "./rate-limit/settings.ts";
import { unknownAddressWarning } from "./rate-limit/unknown-address.ts";
import { withKey } from "./routes/access.ts";
import { HandlerContext, type HandlerSettings, type RequestContext, type RouteHandler } from "./routes/context.ts";
import { answerPreflight, CROSS_ORIGIN_HEADERS, PREFLIGHT_HEADERS } from "./routes/cors.ts";
import { IDEMPOTENCY_KEY } from "./routes/create/idempotency.ts";
import { createSubmission } from "./routes/create/pipeline.ts";
import { checkHealth } from "./routes/health.ts";
import { type Method, RATE_LIMIT_HEADERS, type Route, schemaRef } from "./routes/route.ts";
import { deleteSubmission, getSubmission, listSubmissions, updateSubmissionStatus } from "./routes/submissions.ts";
import type { SubmissionStore } from "./store.ts";
import { DEFAULT_MAX_WEBHOOKS } from "./webhook-endpoints.ts";

/**
 * The routes whose modules validate with arktype (src/schemas.ts), loaded on their first
 * request: importing arktype is most of the time and memory a start costs, so a server answers
 * without it until a request needs it (bench/README.md, cold start and idle RSS). Lists,
 * creates and status changes read what they are sent without it, and load it only to word a 400.
 */
const eventRoutes = () => import("./routes/events.ts");
const exportRoutes = () => import("./routes/export.ts");
const privacyRoutes = () => import("./routes/privacy.ts");
const webhookRoutes = () => import("./routes/webhooks.ts");

const listEvents = loadedOnUse(eventRoutes, "listEvents");
const exportSubmissions = loadedOnUse(exportRoutes, "exportSubmissions");
const eraseSubmissions = loadedOnUse(privacyRoutes, "eraseSubmissions");
const getErasure = loadedOnUse(privacyRoutes, "getErasure");
const getRetention = loadedOnUse(privacyRoutes, "getRetention");
const previewRetentionRules = loadedOnUse(privacyRoutes, "previewRetentionRules");
const putRetention = loadedOnUse(privacyRoutes, "putRetention");
const createWebhook = loadedOnUse(webhookRoutes, "createWebhook");
const deleteWebhook = loadedOnUse(webhookRoutes, "deleteWebhook");
const getWebhook = loadedOnUse(webhookRoutes, "getWebhook");
const listDeliveries = loadedOnUse(webhookRoutes, "listDeliveries");
const listWebhooks = loadedOnUse(webhookRoutes, "listWebhooks");
const replayDeliveries = loadedOnUse(webhookRoutes, "replayDeliveries");
const retryDelivery = loadedOnUse(webhookRoutes, "retryDelivery");
const rotateSecret = loadedOnUse(webhookRoutes, "rotateSecret");
const updateWebhook = loadedOnUse(webhookRoutes, "updateWebhook");

// The schemas the table names; src/openapi.ts resolves them when it builds the document.
const createSubmissionBody = schemaRef("createSubmissionBody");
const deleteResult = schemaRef("deleteResult");
const erasureBody = schemaRef("erasureBody");
const erasureReceipt = schemaRef("erasureReceipt");
const eventList = schemaRef("eventList");
const eventsQuery = schemaRef("eventsQuery");
const exportQuery = schemaRef("exportQuery");
const healthOk = schemaRef("healthOk");
const healthUnavailable = schemaRef("healthUnavailable");
const listQuery = schemaRef("listQuery");
const retentionPreview = schemaRef("retentionPreview");
const retentionRules = schemaRef("retentionRules");
const statusUpdateBody = schemaRef("statusUpdateBody");
const statusUpdateResult = schemaRef("statusUpdateResult");
const submission = schemaRef("submission");
const submissionList = schemaRef("submissionList");
const createWebhookBody = schemaRef("createWebhookBody");
const deliveriesQuery = schemaRef("deliveriesQuery");
const deliveryList = schemaRef("deliveryList");
const replayBody = schemaRef("replayBody");
const replayResult = schemaRef("replayResult");
const retryResult = schemaRef("retryResult");
const updateWebhookBody = schemaRef("updateWebhookBody");
const webhook = schemaRef("webhook");
const webhookDeleted = schemaRef("webhookDeleted");
const webhookList = schemaRef("webhookList");
const webhookWithSecret = schemaRef("webhookWithSecret");

const ERRORS_READ = [400, 401, 403, 500] as const;
const ERRORS_ONE = [401, 403, 404, 500] as const;
const ERRORS_WRITE = [400, 401, 403, 404, 413, 415, 500] as const;

const ERRORS_WEBHOOK = [401, 403, 404, 500, 501] as const;
const ERRORS_WEBHOOK_WRITE = [400, 401, 403, 404, 413, 415, 500, 501] as const;

const CREATED_HEADERS = {
  Location: { description: "The new submission's URL path", schema: { type: "string" } },
  "Idempotent-Replayed": { description: "`true` when an earlier request with the same Idempotency-Key made the submission", schema: { type: "string", enum: ["true"] } },
  ...RATE_LIMIT_HEADERS,
} as const;

/**
 * Every route of the API, in one table: where a newcomer looks first. Each carries what the
 * OpenAPI document says about it; the schemas named there are the ones its handler validates with.
 */
export const ROUTES: readonly Route[] = [
  {
    method: "GET", path: "/api/submission", access: "secret", handle: listSubmissions,
    doc: {
      operationId: "listSubmissions", summary: "List submissions: a page, filtered and sorted, with the filtered total",
      query: listQuery,
      responses: { 200: { description: "The page", content: { "application/json": submissionList } } },
      errors: ERRORS_READ,
    },
  },
  {
    method: "POST", path: "/api/submission", access: "create", handle: createSubmission, crossOrigin: true,
    doc: {
      operationId: "createSubmission", summary: "Create a submission (secret key, or a publishable key from one of its domains)",
      description:
        "`submissionId`, `status` (`pending`) and `createdAt` are set by the service; `device` is derived from the User-Agent when not sent, `domain` from Origin or Referer. " +
        "An HTML form may post without JavaScript: every field that is not `popupId` or starts with `_` becomes `data`; `_key` carries a publishable key, `_redirect` a page to return to (303), `_gotcha` is a honeypot. " +
        "Creates with a publishable key are rate limited per key and client address (429 with `Retry-After`).",
      headers: {
        "Idempotency-Key": {
          description: "1 to 255 visible ASCII characters, such as a UUID. A retry with the same key and body within 24 hours returns the first result instead of creating a duplicate; the same key with another body is 422",
          schema: { type: "string", minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY.source },
        },
      },
      body: {
        "application/json": createSubmissionBody,
        "application/x-www-form-urlencoded": schemaRef("createSubmissionBody", "as form"),
        "multipart/form-data": schemaRef("createSubmissionBody", "as form"),
      },
      responses: {
        201: {
          description: "The created submission (JSON), or for a form posted by a browser that prefers HTML a small thank-you page",
          content: { "application/json": submission, "text/html": { type: "string" } },
          headers: CREATED_HEADERS,
        },
        303: { description: "A form post with `_redirect`: back to that page", headers: { Location: { description: "The `_redirect` URL", schema: { type: "string" } } } },
      },
      errors: [400, 401, 403, 413, 415, 422, 429, 500],
    },
  },
  {
    method: "OPTIONS", path: "/api/submission", access: "public", handle: answerPreflight, crossOrigin: true,
    doc: {
      operationId: "preflightCreateSubmission", summary: "CORS preflight for creates from web pages: any origin, POST, x-api-key, content-type, idempotency-key",
      responses: { 204: { description: "The CORS answer", headers: PREFLIGHT_HEADERS } },
      errors: [],
    },
  },
  // Before `/api/submission/:submissionId`, which would otherwise take "export" for an id.
  {
    method: "GET", path: "/api/submission/export", access: "secret", handle: exportSubmissions,
    doc: {
      operationId: "exportSubmissions", summary: "Export every matching submission as CSV or NDJSON, streamed",
      description:
        "The list's filters and order without `limit`/`offset`. " +
        `A CSV has one column per distinct data key: more than ${MAX_CSV_DATA_COLUMNS} is 400 (export NDJSON, or one popup at a time). ` +
        "CSV cells that start with `=`, `+`, `-`, `@`, tab, CR or NUL are prefixed with `'` against formula injection (as is a cell that starts with `'`, so that import can undo it), except plain numbers; a cell holding `;` is quoted, so that a spreadsheet splitting on semicolons starts no cell inside it.",
      query: exportQuery,
      responses: {
        200: {
          description: "The whole result, streamed; `Content-Disposition` names a file",
          content: {
            "text/csv": { type: "string" },
            // OpenAPI 3.1 has no schema for the items of a stream (3.2's itemSchema): a string, described.
            "application/x-ndjson": {
              type: "string",
              description: "Newline-delimited JSON: one Submission (#/components/schemas/Submission) per line, each line ending in a line feed",
            },
          },
          headers: { "Content-Disposition": { description: "attachment; filename=\"submissions-<UTC time>.<format>\"", schema: { type: "string" } } },
        },
      },
      errors: ERRORS_READ,
    },
  },
  {
    method: "GET", path: "/api/submission/:submissionId", access: "secret", handle: getSubmission,
    doc: {
      operationId: "getSubmission", summary: "Get one submission",
      responses: { 200: { description: "The submission", content: { "application/json": submission } } },
      errors: ERRORS_ONE,
    },
  },
  {
    method: "PATCH", path: "/api/submission/:submissionId", access: "secret", handle: updateSubmissionStatus,
    doc: {
      operationId: "updateSubmissionStatus", summary: "Set a submission's status (any status may move to any status)",
      body: { "application/json": statusUpdateBody },
      responses: { 200: { description: "The new status", content: { "application/json": statusUpdateResult } } },
      errors: ERRORS_WRITE,
    },
  },
  {
    method: "DELETE", path: "/api/submission/:submissionId", access: "secret", handle: deleteSubmission,
    doc: {
      operationId: "deleteSubmission", summary: "Delete a submission for good",
      responses: { 200: { description: "Deleted", content: { "application/json": deleteResult } } },
      errors: ERRORS_ONE,
    },
  },
  {
    method: "POST", path: "/api/erasure", access: "secret", handle: eraseSubmissions,
    doc: {
      operationId: "eraseSubmissions", summary: "Erase a person: delete every submission of the account whose data[field] is the value, and keep a receipt",
      description:
        "`email` is compared ignoring the case of ASCII letters, any other field exactly; only string values match. The field must be one of the deployment's identifying fields (default `email`), " +
        "which are indexed so that finding the matches does not read the account. The receipt keeps a keyed hash of the value, never the value. " +
        "`dryRun: true` finds and counts the matches, deletes nothing and keeps no receipt (200, `erasureId: null`). Erasing the same value again finds nothing.",
      body: { "application/json": erasureBody },
      responses: {
        200: { description: "A dry run: what an erasure would delete", content: { "application/json": erasureReceipt } },
        201: {
          description: "Done: the receipt",
          content: { "application/json": erasureReceipt },
          headers: { Location: { description: "The receipt's URL path", schema: { type: "string" } } },
        },
      },
      errors: [400, 401, 403, 413, 415, 500, 501],
    },
  },
  {
    method: "GET", path: "/api/erasure/:erasureId", access: "secret", handle: getErasure,
    doc: {
      operationId: "getErasure", summary: "Read an erasure receipt (without the value erased)",
      responses: { 200: { description: "The receipt", content: { "application/json": erasureReceipt } } },
      errors: [401, 403, 404, 500, 501],
    },
  },
  {
    method: "GET", path: "/api/retention", access: "secret", handle: getRetention,
    doc: {
      operationId: "getRetentionRules", summary: "The account's retention rules",
      responses: { 200: { description: "The rules (an empty list when there are none)", content: { "application/json": retentionRules } } },
      errors: [401, 403, 500, 501],
    },
  },
  {
    method: "PUT", path: "/api/retention", access: "secret", handle: putRetention,
    doc: {
      operationId: "setRetentionRules", summary: "Replace the account's retention rules",
      description:
        "Each rule deletes the submissions created more than `olderThanDays` days ago, of one popup and of one status when given. " +
        "The server's background loop (on Workers, the scheduled handler) enforces them. An empty list removes every rule.",
      body: { "application/json": retentionRules },
      responses: { 200: { description: "The rules now in force", content: { "application/json": retentionRules } } },
      errors: [400, 401, 403, 413, 415, 500, 501],
    },
  },
  {
    method: "GET", path: "/api/retention/preview", access: "secret", handle: previewRetentionRules,
    doc: {
      operationId: "previewRetention", summary: "How many submissions each retention rule would delete now (deletes nothing)",
      responses: { 200: { description: "One count per rule, in the rules' order", content: { "application/json": retentionPreview } } },
      errors: [401, 403, 500, 501],
    },
  },
  {
    method: "GET", path: "/api/events", access: "secret", handle: listEvents,
    doc: {
      operationId: "listEvents", summary: "Read the change log: every create, status change and deletion, in commit order, by cursor",
      description:
        "Follow `nextCursor` (as `after`) to see every event exactly once, in commit order: an event never appears later behind a cursor already handed out. " +
        "Without `after`, reading starts at the oldest event kept. `type` (comma-separated) and `popupId` filter; the cursor still moves past what they skip. " +
        "Events are kept for a configurable time (30 days by default): a cursor older than that is 410. " +
        "`data` of `submission.created` is the Submission (of a submission deleted since, only `submissionId` and `popupId`); of `submission.status_changed`, `{submissionId, popupId, status, previousStatus}`; of `submission.deleted`, the tombstone `{submissionId, popupId, reason}`.",
      query: eventsQuery,
      responses: { 200: { description: "The page and where the next one starts", content: { "application/json": eventList } } },
      errors: [400, 401, 403, 410, 500],
    },
  },
  {
    method: "POST", path: "/api/webhooks", access: "secret", handle: createWebhook,
    doc: {
      operationId: "createWebhook", summary: "Subscribe an endpoint to the account's events; the answer holds its signing secret, shown only this once",
      description:
        "Each event of the change log (see `GET /api/events`) is POSTed to `url` as JSON with the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature`, " +
        "from the first event committed after this request. `types` and `popupId` narrow what is sent. " +
        "`url` must be `https` and must not name a private or loopback address unless the deployment allows private webhooks (`--allow-private-webhooks`); the dispatcher checks again after DNS resolution at every delivery. " +
        "An account may have 20 endpoints unless the deployment says otherwise (409 beyond).",
      body: { "application/json": createWebhookBody },
      responses: {
        201: {
          description: "The endpoint, with its secret (`whsec_...`): keep it to verify signatures; it is never shown again",
          content: { "application/json": webhookWithSecret },
          headers: { Location: { description: "The endpoint's URL path", schema: { type: "string" } } },
        },
      },
      errors: [400, 401, 403, 409, 413, 415, 500, 501],
    },
  },
  {
    method: "GET", path: "/api/webhooks", access: "secret", handle: listWebhooks,
    doc: {
      operationId: "listWebhooks", summary: "The account's webhook endpoints, oldest first (without their secrets)",
      responses: { 200: { description: "Every endpoint", content: { "application/json": webhookList } } },
      errors: [401, 403, 500, 501],
    },
  },
  {
    method: "GET", path: "/api/webhooks/:webhookId", access: "secret", handle: getWebhook,
    doc: {
      operationId: "getWebhook", summary: "One webhook endpoint (without its secrets)",
      responses: { 200: { description: "The endpoint", content: { "application/json": webhook } } },
      errors: ERRORS_WEBHOOK,
    },
  },
  {
    method: "PATCH", path: "/api/webhooks/:webhookId", access: "secret", handle: updateWebhook,
    doc: {
      operationId: "updateWebhook", summary: "Change an endpoint: its URL, filters, description, or whether it is enabled",
      description:
        "Only the fields sent change; `null` clears `types` (every type), `popupId` (every popup) or `description`. " +
        "`enabled: false` stops deliveries (`disabledAt` says since when); `enabled: true` resumes them, including to an endpoint the dispatcher disabled (a 410 answer, or days of failures).",
      body: { "application/json": updateWebhookBody },
      responses: { 200: { description: "The endpoint as it is now", content: { "application/json": webhook } } },
      errors: ERRORS_WEBHOOK_WRITE,
    },
  },
  {
    method: "DELETE", path: "/api/webhooks/:webhookId", access: "secret", handle: deleteWebhook,
    doc: {
      operationId: "deleteWebhook", summary: "Remove an endpoint and its delivery log; nothing more is sent to it",
      responses: { 200: { description: "Deleted", content: { "application/json": webhookDeleted } } },
      errors: ERRORS_WEBHOOK,
    },
  },
  {
    method: "POST", path: "/api/webhooks/:webhookId/rotate-secret", access: "secret", handle: rotateSecret,
    doc: {
      operationId: "rotateWebhookSecret", summary: "Give an endpoint a new signing secret, shown only in this answer",
      description:
        "For 24 hours the previous secret keeps signing beside the new one (`webhook-signature` then carries two signatures, space-separated), so a receiver can switch without missing a delivery; `previousSecretExpiresAt` says until when.",
      responses: { 200: { description: "The endpoint with its new secret", content: { "application/json": webhookWithSecret } } },
      errors: ERRORS_WEBHOOK,
    },
  },
  {
    method: "GET", path: "/api/webhooks/:webhookId/deliveries", access: "secret", handle: listDeliveries,
    doc: {
      operationId: "listWebhookDeliveries", summary: "An endpoint's delivery log, newest event first",
      description:
        "One entry per event sent or to be sent to the endpoint: its status (`pending` while attempts remain, `succeeded`, `failed`), attempts, the last and next attempt's time, the last status code, error and duration. " +
        "Follow `nextCursor` (as `cursor`) for older deliveries.",
      query: deliveriesQuery,
      responses: { 200: { description: "The page and where the next one starts", content: { "application/json": deliveryList } } },
      errors: [400, 401, 403, 404, 500, 501],
    },
  },
  {
    method: "POST", path: "/api/webhooks/:webhookId/deliveries/:eventId/retry", access: "secret", handle: retryDelivery,
    doc: {
      operationId: "retryWebhookDelivery", summary: "Send one event to the endpoint again, now (a failed delivery too)",
      description: "The delivery becomes `pending` and due now; its attempts count on.",
      responses: { 202: { description: "Queued", content: { "application/json": retryResult } } },
      errors: ERRORS_WEBHOOK,
    },
  },
  {
    method: "POST", path: "/api/webhooks/:webhookId/replay", access: "secret", handle: replayDeliveries,
    doc: {
      operationId: "replayWebhook", summary: "Send again every event kept since an instant that the endpoint subscribes to",
      description:
        "For a receiver that lost data: every event of the change log stamped at or after `since` that matches the endpoint's `types` and `popupId` (including events from before the endpoint existed) becomes a pending delivery, due now. " +
        "Events older than the log keeps (30 days by default) are gone: export the submissions instead.",
      body: { "application/json": replayBody },
      responses: { 202: { description: "How many deliveries were queued", content: { "application/json": replayResult } } },
      errors: ERRORS_WEBHOOK_WRITE,
    },
  },
  {
    method: "GET", path: "/api/openapi.json", access: "public", handle: serveOpenApiDocument,
    doc: {
      operationId: "getOpenApiDocument", summary: "This OpenAPI 3.1 document (no key needed)",
      responses: {
        200: {
          description: "The document",
          content: {
            "application/json": {
              type: "object",
              properties: { openapi: { type: "string" }, info: { type: "object" }, paths: { type: "object" } },
              required: ["openapi", "info", "paths"],
            },
          },
        },
      },
      errors: [500],
    },
  },
  {
    method: "GET", path: "/api/health", access: "public", handle: checkHealth,
    doc: {
      operationId: "getHealth", summary: "Whether the service can reach its store (no key needed; never cached)",
      responses: {
        200: { description: "The store answered a trivial query in time", content: { "application/json": healthOk } },
        503: { description: "The store failed the query or did not answer in time", content: { "application/json": healthUnavailable } },
      },
      errors: [],
    },
  },
];

/**
 * The API as a Fetch handler, with the same API beside it for adapters that make no Fetch
 * objects. `connection` is what the adapter knows about where the request came from; without
 * it (or its `clientAddress`), rate limits count every client as one.
 */
export interface SubmissionsHandler {
  (request: Request, connection?: ConnectionInfo): Promise<Response>;
  /**
   * Answers as the Fetch handler does, from a request and to an answer that are plain values:
   * what a server adapter calls when making a `Request` and a `Response` for each request
   * would cost more than the answer itself (formsink/node does).
   */
  answer(request: ApiRequest, connection?: ConnectionInfo): Promise<Answer>;
}

/**
 * The whole API as one Fetch handler: give it a store, mount it anywhere that speaks
 * `Request`/`Response` (Node via `formsink/node`, Bun, Deno, Workers, a Hono or Next.js route).
 */
export function createSubmissionsHandler(store: SubmissionStore, options: SubmissionsHandlerOptions = {}): SubmissionsHandler {
  const basePath = normalizeBasePath(options.basePath ?? "");
  const maxWebhooks = options.maxWebhooksPerAccount ?? DEFAULT_MAX_WEBHOOKS;
  if (!Number.isSafeInteger(maxWebhooks) || maxWebhooks < 0) {
    throw new TypeError(`maxWebhooksPerAccount must be a whole number of 0 or more (got ${maxWebhooks})`);
  }
  const authenticate: Authenticate = options.authenticate ?? authenticateWithStore(store);
  const settings: HandlerSettings = {
    store,
    limits: handlerLimits(options.limits),
    rateLimits: rateLimitSettings(options.rateLimit),
    authenticate,
    basePath,
    newSubmissionId: createSubmissionIdGenerator(),
    healthTimeoutMs: options.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS,
    webhooks: {
      maxWebhooks,
      allowPrivateWebhooks: options.allowPrivateWebhooks ?? false,
    },
    warnUnknownClientAddress: unknownAddressWarning(options.log),
  };
  const clientAddress = options.clientAddress ?? connectionAddress;
  const { log, onChange } = options;
  const route = routeFinder(basePath);

  const answer = async (request: ApiRequest, connection: ConnectionInfo = {}): Promise<Answer> => {
    const started = log && performance.now();
    const plainPath = request.plainPath ?? plainPathOf(request.url);
    const url = plainPath === undefined ? new URL(request.url) : undefined;
    const path = plainPath ?? url!.pathname;
    const requestId = requestIdOf(request);
    const found = route(request.method, path);
    let answer: Answer;
    try {
      if (!found) throw new HttpError(404, "Not found");
      const context = new HandlerContext(settings, request.url, url, found.params, clientAddress(request, connection));
      answer = await found.handle(request, context);
    } catch (error) {
      if (!(error instanceof HttpError)) log?.({ type: "error", requestId, method: request.method, path: withoutApiKeys(path), error });
      answer = toErrorAnswer(error);
    }
    if (onChange && found && mayHaveChanged(request.method, answer.status)) onChange();
    if (found?.crossOrigin) Object.assign(answer.headers, CROSS_ORIGIN_HEADERS);
    answer.headers["x-request-id"] = requestId;
    if (log) {
      // The route's pattern, not the raw path: metrics count by it.
      log({ type: "request", requestId, method: request.method, path: withoutApiKeys(path), route: found?.pattern, status: answer.status, durationMs: performance.now() - started! });
    }
    return answer;
  };
  const handler = async (request: Request, connection?: ConnectionInfo) => toResponse(await answer(fromFetchRequest(request), connection));
  return Object.assign(handler, { answer });
}

interface FoundRoute {
  handle: RouteHandler;
  params: Record<string, string>;
  /** The path pattern that matched, with the base path, e.g. `/api/submission/:submissionId`. */
  pattern: string;
  crossOrigin: boolean;
}

/**
 * Finds the route for a request's method and path with the patterns itty-router compiles; a
 * path the API has with another method finds a handler that answers 405.
 */
function routeFinder(basePath: string): (method: string, pathname: string) => FoundRoute | undefined {
  const router = Router<IRequest, [], FoundRoute>({ base: basePath });
  for (const route of ROUTES) {
    const handle = route.access === "secret" ? withKey(route.handle) : route.handle;
    const crossOrigin = route.crossOrigin ?? false;
    router[route.method.toLowerCase() as Lowercase<Method>](route.path, ({ params }) => ({ handle, params, pattern: basePath + route.path, crossOrigin }));
  }
  for (const [path, methods] of methodsByPath(ROUTES)) {
    const notAllowed: RouteHandler = () => {
      throw new HttpError(405, `Method not allowed; use ${methods.join(", ")}`, { allow: methods.join(", ") });
    };
    router.all(path, ({ params }) => ({ handle: notAllowed, params, pattern: basePath + path, crossOrigin: false }));
  }
  // Matched here, in itty-router's order and as its `fetch` matches, on the path the handler has
  // parsed already: `fetch` would parse the URL once more and await every step
  // (bench/http.ts, every route's CPU per request).
  const routes = router.routes.map(([method, pattern, [found]]) => ({ method, pattern, found: found! }));
  return (method, pathname) => {
    for (const route of routes) {
      if (route.method !== method && route.method !== "ALL") continue;
      const match = route.pattern.exec(pathname);
      if (match) return route.found({ params: match.groups ?? {} } as IRequest) as FoundRoute;
    }
    return undefined;
  };
}

/** The document depends only on the handler's base path and limits: made once per handler. */
const openApiDocuments = new WeakMap<Limits, string>();

async function serveOpenApiDocument(_request: ApiRequest, context: RequestContext): Promise<Answer> {
  let text = openApiDocuments.get(context.limits);
  if (text === undefined) {
    const { openApiDocument } = await import("./openapi.ts");
    text = JSON.stringify(openApiDocument(ROUTES, context));
    openApiDocuments.set(context.limits, text);
  }
  return { status: 200, headers: { "content-type": "application/json", "x-content-type-options": "nosniff" }, body: text };
}

/** A route handler exported as `name` by the module `load` imports, imported on its first call. */
function loadedOnUse<Module extends Record<Name, RouteHandler<never>>, Name extends string>(load: () => Promise<Module>, name: Name): Module[Name] {
  let handle: Module[Name] | undefined;
  const loadedHandler = (request: ApiRequest, context: never) =>
    handle !== undefined ? handle(request, context) : load().then((module) => (handle = module[name])(request, context));
  return loadedHandler as Module[Name];
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
