/**
 * CORS for the create path, the one route a web page calls. Any origin may ask (the answer is
 * `*`: no cookies are involved, the key is in a header); the create itself then checks the
 * page against the key's domains. Error answers carry the same headers, so a page can read a
 * 400's or a 403's message.
 */
import type { RouteHandler } from "./context.ts";

/** Added to every answer of a route marked `crossOrigin`, errors included. */
export const CROSS_ORIGIN_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": ["location", "retry-after", "ratelimit", "ratelimit-policy", "idempotent-replayed"].join(", "),
};

// Chromium caps a preflight cache at 2 hours; longer is ignored.
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/** The answer to `OPTIONS` on the create path: for any origin, POST with the headers a page sends. */
export const answerPreflight: RouteHandler = () => ({
  status: 204,
  headers: {
    "access-control-allow-methods": "POST",
    "access-control-allow-headers": "x-api-key, content-type, idempotency-key",
    "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
  },
  body: null,
});
