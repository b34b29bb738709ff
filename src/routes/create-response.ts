/**
 * How a create is answered: JSON for scripts, and for HTML forms posted without JavaScript a
 * 303 to the form's `_redirect` or a small thank-you page.
 */
import { isAllowedPage, pageUrl } from "../auth/page-origin.ts";
import type { Principal } from "../auth/principal.ts";
import { HttpError } from "../http/errors.ts";
import type { Answer } from "../http/answer.ts";
import { jsonAnswer } from "../http/json.ts";
import type { Submission } from "../submission.ts";
import type { CreateRequest } from "./create-request.ts";

export interface CreatedAnswer {
  submission: Submission;
  /** True when an earlier request with the same Idempotency-Key made the submission. */
  replayed: boolean;
  location: string;
}

/**
 * The form's `_redirect` as a URL the browser may be sent to: absolute http(s), on one of the
 * key's domains, so that formsink is never an open redirect. Secret keys list no domains, so
 * `_redirect` is for publishable keys' forms.
 */
export function redirectTarget(input: CreateRequest, principal: Principal): URL | undefined {
  const text = input.form?.redirect;
  if (text === undefined) return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || !isAllowedPage(url, principal.domains)) {
    throw new HttpError(400, "_redirect must be an absolute http(s) URL on one of the key's domains");
  }
  return url;
}

export function createdResponse(
  answer: CreatedAnswer,
  request: Request,
  input: CreateRequest,
  redirect: URL | undefined,
  principal: Principal,
): Answer {
  const headers: Record<string, string> = answer.replayed ? { "idempotent-replayed": "true" } : {};
  if (redirect) {
    return { status: 303, headers: { ...headers, location: redirect.href, "cache-control": "no-store" }, body: null };
  }
  if (input.form && prefersHtml(request.headers.get("accept"))) {
    return thankYouPage(backLink(request, principal), headers);
  }
  return jsonAnswer(answer.submission, 201, { ...headers, location: answer.location });
}

/** The page the form was on, for a link back: only a page the key may be used from. */
function backLink(request: Request, principal: Principal): URL | undefined {
  const referer = request.headers.get("referer");
  const page = referer && URL.canParse(referer) ? new URL(referer) : pageUrl(request);
  return page && (page.protocol === "https:" || page.protocol === "http:") && isAllowedPage(page, principal.domains) ? page : undefined;
}

function thankYouPage(back: URL | undefined, headers: Record<string, string>): Answer {
  const link = back ? `<p><a href="${escapeHtml(back.href)}">Back to ${escapeHtml(back.host)}</a></p>` : "";
  const html = `<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Thank you</title>
<style>body{font:17px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#1f2328}</style>
<h1>Thank you!</h1><p>Your submission was received.</p>${link}
</html>
`;
  return {
    status: 201,
    body: html,
    headers: {
      ...headers,
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      // The page runs nothing and loads nothing.
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * True when the client ranks `text/html` above `application/json`, as a browser navigating
 * does (`text/html,...,*\/*;q=0.8`); a script's `*\/*`, or no Accept at all, gets JSON.
 */
export function prefersHtml(accept: string | null): boolean {
  if (!accept) return false;
  const ranges = accept.split(",").map((part) => {
    const [range = "", ...params] = part.split(";").map((piece) => piece.trim().toLowerCase());
    const q = params.find((param) => param.startsWith("q="));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    return { range, quality: Number.isFinite(quality) ? quality : 0 };
  });
  // The most specific range that covers a type decides its quality (RFC 9110, 12.5.1).
  const qualityOf = (type: string) => {
    const [major] = type.split("/");
    const match = ranges.find((r) => r.range === type) ?? ranges.find((r) => r.range === `${major}/*`) ?? ranges.find((r) => r.range === "*/*");
    return match?.quality ?? 0;
  };
  return qualityOf("text/html") > qualityOf("application/json");
}
