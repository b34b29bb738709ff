import { HttpError } from "../../http/errors.ts";
import type { RequestHead } from "../../http/request.ts";
import { addressBucket } from "../../rate-limit/client-address.ts";
import type { Caller } from "../access.ts";
import type { RequestContext } from "../context.ts";

/**
 * Counts a create against its key's policy, per key and client address, in fixed windows.
 * Gives the IETF RateLimit and RateLimit-Policy fields (draft-ietf-httpapi-ratelimit-headers)
 * that every answer to the create then carries, or none when the key's kind has no policy;
 * over the limit, a 429 with Retry-After and the same fields. A deployment whose client
 * address is unknown counts all its clients as one.
 */
export async function countCreate(request: RequestHead, context: RequestContext, { principal, keyName }: Caller): Promise<Record<string, string>> {
  const policy = context.rateLimits.policies[principal.kind];
  if (!policy) return {};
  if (context.clientAddress === undefined) context.warnUnknownClientAddress(request.method, context.url.pathname);
  const windowMs = policy.windowSeconds * 1000;
  const now = Date.now();
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const windowEnd = windowStart + windowMs;
  const bucket = `create|${principal.kind}|${keyName}|${addressBucket(context.clientAddress)}`;
  const hits = await context.rateLimits.limiter.countHit(bucket, windowStart, windowEnd);

  const resetSeconds = Math.max(1, Math.ceil((windowEnd - now) / 1000));
  const name = `"${principal.kind}"`;
  const fields = {
    "ratelimit-policy": `${name};q=${policy.limit};w=${policy.windowSeconds}`,
    ratelimit: `${name};r=${Math.max(0, policy.limit - hits)};t=${resetSeconds}`,
  };
  if (hits > policy.limit) {
    throw new HttpError(
      429,
      `Too many submissions: at most ${policy.limit} every ${policy.windowSeconds} seconds; try again in ${resetSeconds} second${resetSeconds === 1 ? "" : "s"}`,
      { ...fields, "retry-after": String(resetSeconds) },
    );
  }
  return fields;
}
