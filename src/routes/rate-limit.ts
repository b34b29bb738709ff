import { HttpError } from "../http/errors.ts";
import { addressBucket } from "../rate-limit/client-address.ts";
import { principalOf, type RouteHandler } from "./context.ts";

/**
 * The step after the access step on creates: counts the request against its key's policy, per
 * key and client address, in fixed windows. Every answer then carries the IETF RateLimit and
 * RateLimit-Policy fields (draft-ietf-httpapi-ratelimit-headers); over the limit it is 429 with
 * Retry-After. A deployment whose client address is unknown counts all its clients as one.
 */
export const limitCreateRate: RouteHandler = async (request, context) => {
  const principal = principalOf(context);
  const policy = context.rateLimits.policies[principal.kind];
  if (!policy) return undefined;
  if (context.clientAddress === undefined) context.warnUnknownClientAddress(request.method, context.url.pathname);
  const windowMs = policy.windowSeconds * 1000;
  const now = Date.now();
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const windowEnd = windowStart + windowMs;
  const bucket = `create|${principal.kind}|${context.keyName}|${addressBucket(context.clientAddress)}`;
  const hits = await context.rateLimits.limiter.countHit(bucket, windowStart, windowEnd);

  const resetSeconds = Math.max(1, Math.ceil((windowEnd - now) / 1000));
  const name = `"${principal.kind}"`;
  context.responseHeaders["ratelimit-policy"] = `${name};q=${policy.limit};w=${policy.windowSeconds}`;
  context.responseHeaders.ratelimit = `${name};r=${Math.max(0, policy.limit - hits)};t=${resetSeconds}`;
  if (hits > policy.limit) {
    throw new HttpError(
      429,
      `Too many submissions: at most ${policy.limit} every ${policy.windowSeconds} seconds; try again in ${resetSeconds} second${resetSeconds === 1 ? "" : "s"}`,
      { "retry-after": String(resetSeconds) },
    );
  }
  return undefined;
};
