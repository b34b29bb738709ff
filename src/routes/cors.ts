/**
 * CORS for the create path, the one route a web page calls. Any origin may ask (the answer is
 * `*`: no cookies are involved, the key is in a header); the create itself then checks the
 * page against the key's domains. Error answers carry the same headers, so a page can read a
 * 400's or a 403's message.
 */
import type { HeaderDoc } from "./route.ts";
import type { RouteHandler } from "./context.ts";

/** Added to every answer of a route marked `crossOrigin`, errors included. */
export const CROSS_ORIGIN_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": ["location", "retry-after", "ratelimit", "ratelimit-policy", "idempotent-replayed", "x-request-id"].join(", "),
};

// Chromium caps a preflight cache at 2 hours; longer is ignored.
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

const PREFLIGHT_ANSWER_HEADERS = {
  "access-control-allow-methods": "POST",
  "access-control-allow-headers": "x-api-key, content-type, idempotency-key",
  "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
};

/** The answer to `OPTIONS` on the create path: for any origin, POST with the headers a page sends. */
// Object.assign, not a spread: the handler adds headers to it (src/http/json.ts says why).
export const answerPreflight: RouteHandler = () => ({ status: 204, headers: Object.assign({}, PREFLIGHT_ANSWER_HEADERS), body: null });

/** The preflight's headers as the OpenAPI document gives them: each with its one value. */
export const PREFLIGHT_HEADERS: Record<string, HeaderDoc> = {
  "Access-Control-Allow-Origin": { description: "Any origin", schema: { type: "string", const: "*" } },
  "Access-Control-Allow-Methods": { description: "Creates only", schema: { type: "string", const: PREFLIGHT_ANSWER_HEADERS["access-control-allow-methods"] } },
  "Access-Control-Allow-Headers": { description: "The headers a page sends", schema: { type: "string", const: PREFLIGHT_ANSWER_HEADERS["access-control-allow-headers"] } },
  "Access-Control-Max-Age": { description: "Seconds a browser may keep this answer", schema: { type: "string", const: PREFLIGHT_ANSWER_HEADERS["access-control-max-age"] } },
  "Access-Control-Expose-Headers": { description: "The answer headers a page may read", schema: { type: "string", const: CROSS_ORIGIN_HEADERS["access-control-expose-headers"] } },
};
