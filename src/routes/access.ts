import { hashApiKey } from "../auth/api-key.ts";
import { isAllowedPage, pageUrl } from "../auth/page-origin.ts";
import type { Principal } from "../auth/principal.ts";
import { HttpError } from "../http/errors.ts";
import type { RequestHead } from "../http/request.ts";
import type { KeyedContext, RequestContext, RouteHandler } from "./context.ts";

/**
 * Which keys may call a route: secret keys only, any key that may create, or no key at all.
 * Routes for secret keys are wrapped in `withKey`; the create route checks its key itself (see
 * routes/create/pipeline.ts), since a form may carry the key in its body.
 */
export type Access = "secret" | "create" | "public";

/** Who calls: what a checked key acts for, and the name its rate limits count it under. */
export interface Caller {
  principal: Principal;
  /** The key's id, or a hash of the key: never the key itself. */
  keyName: string;
}

const SECRET_KEY_PREFIX = "fs_sk_";

/** A route for secret keys: `handle` runs once the key is checked, and is told whom it acts for. */
export function withKey(handle: RouteHandler<KeyedContext>): RouteHandler {
  return async (request, context) => {
    const { principal } = await checkKey(request, context, "secret");
    return handle(request, context.withPrincipal(principal));
  };
}

/**
 * The key check: the key must be present, known and unrevoked (401), of a kind the route
 * accepts (403), and a publishable key must come from a page on one of its domains (403).
 * `fieldKey` is the `_key` field of a form body, read before this check: only a create
 * passes it, and only for a form post.
 */
export async function checkKey(
  request: RequestHead,
  context: RequestContext,
  access: Exclude<Access, "public">,
  fieldKey?: string,
): Promise<Caller> {
  if (context.hasQuery) refuseKeysInUrl(context.url);
  const headerKey = request.headers.get("x-api-key")?.trim() || undefined;
  const apiKey = headerKey ?? keyFromField(fieldKey);
  if (!apiKey) throw missingKey(request);
  const principal = await context.authenticate(apiKey, request);
  if (!principal) throw new HttpError(401, "Invalid API key");
  if (principal.kind === "secret" && headerKey === undefined) throw secretKeyOutsideHeader();
  if (principal.kind === "publishable") checkPublishableUse(request, principal, access);
  if (headerKey !== undefined && fieldKey !== undefined) {
    // A form may carry its key as a field too (a script posting the form's own fields); then
    // the two must agree, and a secret key never belongs in a field.
    if (fieldKey.startsWith(SECRET_KEY_PREFIX)) throw secretKeyOutsideHeader();
    if (fieldKey !== headerKey) throw new HttpError(400, "The _key field and the x-api-key header name different keys; send one key");
  }
  return { principal, keyName: principal.keyId ?? (await hashApiKey(apiKey)).slice(0, 32) };
}

function keyFromField(fieldKey: string | undefined): string | undefined {
  const key = fieldKey?.trim();
  // Refused before any lookup: the key is already exposed in a page's source.
  if (key?.startsWith(SECRET_KEY_PREFIX)) throw secretKeyOutsideHeader();
  return key;
}

/**
 * Keys never travel in URLs, which end up in logs, browser history and Referer headers: a
 * secret key anywhere in the query is refused outright, and `_key` there is pointed to its place.
 */
function refuseKeysInUrl(url: URL): void {
  for (const [name, value] of url.searchParams) {
    if (value.trim().startsWith(SECRET_KEY_PREFIX)) throw secretKeyOutsideHeader();
    if (name === "_key" || name.toLowerCase() === "x-api-key") {
      throw new HttpError(400, "Send the API key in the x-api-key header, or as the _key field of a form body, not in the URL");
    }
  }
}

/** 401 without a key; a key sent the way other APIs take one is pointed to x-api-key. */
function missingKey(request: RequestHead): HttpError {
  if (request.headers.get("authorization") !== null) {
    return new HttpError(401, "API key is required: send it in the x-api-key header (the Authorization header is not read)");
  }
  return new HttpError(401, "API key is required");
}

function secretKeyOutsideHeader(): HttpError {
  return new HttpError(
    401,
    "Secret keys are accepted only in the x-api-key header; one sent in a form field or URL is exposed (revoke it) and is refused",
  );
}

function checkPublishableUse(request: RequestHead, principal: Principal, access: Exclude<Access, "public">): void {
  if (access !== "create") throw new HttpError(403, "This operation needs a secret key");
  const page = pageUrl(request);
  if (!page) {
    throw new HttpError(403, "Publishable keys work only from a web page on one of the key's domains: the request has no Origin or Referer");
  }
  if (!isAllowedPage(page, principal.domains)) {
    throw new HttpError(403, `This key may not be used from ${page.origin}: it is not one of the key's domains`);
  }
}
