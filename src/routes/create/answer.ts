/**
 * How a create is answered: JSON for scripts, and for HTML forms posted without JavaScript a
 * 303 to the form's `_redirect` or a small thank-you page.
 */
import { isAllowedPage, pageUrl } from "../../auth/page-origin.ts";
import type { Principal } from "../../auth/principal.ts";
import type { Answer } from "../../http/answer.ts";
import { jsonAnswer } from "../../http/json.ts";
import type { RequestHead } from "../../http/request.ts";
import type { Submission } from "../../submission.ts";

export interface Created {
  submission: Submission;
  /** True when an earlier request with the same Idempotency-Key made the submission. */
  replayed: boolean;
}

export interface CreateAnswerOptions {
  principal: Principal;
  basePath: string;
  /** The body was an HTML form. */
  isForm: boolean;
  /** The form's checked `_redirect`. */
  redirect: URL | undefined;
}

export function answerCreated({ submission, replayed }: Created, request: RequestHead, options: CreateAnswerOptions): Answer {
  const answer = createdAnswer(submission, request, options);
  if (replayed) answer.headers["idempotent-replayed"] = "true";
  return answer;
}

// Each answer's headers are an object literal made for it, added to afterwards, not spread
// copies (src/http/json.ts says why).
function createdAnswer(submission: Submission, request: RequestHead, options: CreateAnswerOptions): Answer {
  if (options.redirect) {
    return { status: 303, headers: { location: options.redirect.href, "cache-control": "no-store" }, body: null };
  }
  if (options.isForm && prefersHtml(request.headers.get("accept"))) {
    return thankYouPage(backLink(request, options.principal));
  }
  const answer = jsonAnswer(submission, 201);
  answer.headers.location = `${options.basePath}/api/submission/${submission.submissionId}`;
  return answer;
}

/** The page the form was on, for a link back: only a page the key may be used from. */
function backLink(request: RequestHead, principal: Principal): URL | undefined {
  const referer = request.headers.get("referer");
  const page = referer && URL.canParse(referer) ? new URL(referer) : pageUrl(request);
  return page && (page.protocol === "https:" || page.protocol === "http:") && isAllowedPage(page, principal.domains) ? page : undefined;
}

function thankYouPage(back: URL | undefined): Answer {
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
function prefersHtml(accept: string | null): boolean {
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
