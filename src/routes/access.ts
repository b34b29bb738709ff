import { hashApiKey } from "../auth/api-key.ts";
import { isAllowedPage, pageUrl } from "../auth/page-origin.ts";
import type { Authenticate, Principal } from "../auth/principal.ts";
import { HttpError } from "../http/errors.ts";
import type { RequestContext, RouteHandler, RouteRequest } from "./context.ts";
import { createRequestOf, isFormPost } from "./create-request.ts";

/** Which keys may call a route: secret keys only, any key that may create, or no key at all. */
export type Access = "secret" | "create" | "public";

const SECRET_KEY_PREFIX = "fs_sk_";

/**
 * The step in front of every keyed route: the key must be present, known and unrevoked (401),
 * of a kind the route accepts (403), and a publishable key must come from a page on one of its
 * domains (403). A key in the x-api-key header is checked before the body is read, so an
 * unauthenticated client cannot make the server buffer anything; only a form post without that
 * header has its body (at most the body limit) read first, for its `_key` field.
 */
export function requireKey(authenticate: Authenticate, access: Exclude<Access, "public">): RouteHandler {
  return async (request, context) => {
    refuseKeysInUrl(context.url);
    const headerKey = request.headers.get("x-api-key")?.trim() || undefined;
    const formPost = access === "create" && isFormPost(request);
    const apiKey = headerKey ?? (formPost ? await formKey(request, context) : undefined);
    if (!apiKey) throw missingKey(request);
    const principal = await authenticate(apiKey, request);
    if (!principal) throw new HttpError(401, "Invalid API key");
    if (principal.kind === "secret" && headerKey === undefined) throw secretKeyOutsideHeader();
    if (principal.kind === "publishable") checkPublishableUse(request, principal, access);
    if (formPost && headerKey !== undefined) {
      // A form may carry its key as a field too (a script posting the form's own fields); then
      // the two must agree, and a secret key never belongs in a field.
      const fieldKey = (await createRequestOf(request, context)).form?.key;
      if (fieldKey !== undefined && fieldKey.startsWith(SECRET_KEY_PREFIX)) throw secretKeyOutsideHeader();
      if (fieldKey !== undefined && fieldKey !== headerKey) {
        throw new HttpError(400, "The _key field and the x-api-key header name different keys; send one key");
      }
    }
    context.principal = principal;
    context.keyName = principal.keyId ?? (await hashApiKey(apiKey)).slice(0, 32);
    return undefined;
  };
}

async function formKey(request: RouteRequest, context: RequestContext): Promise<string | undefined> {
  const key = (await createRequestOf(request, context)).form?.key?.trim();
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
function missingKey(request: Request): HttpError {
  if (request.headers.has("authorization")) {
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

function checkPublishableUse(request: Request, principal: Principal, access: Exclude<Access, "public">): void {
  if (access !== "create") throw new HttpError(403, "This operation needs a secret key");
  const page = pageUrl(request);
  if (!page) {
    throw new HttpError(403, "Publishable keys work only from a web page on one of the key's domains: the request has no Origin or Referer");
  }
  if (!isAllowedPage(page, principal.domains)) {
    throw new HttpError(403, `This key may not be used from ${page.origin}: it is not one of the key's domains`);
  }
}
