/**
 * POST /api/submission, top to bottom: read the body, check the key and count the rate limit,
 * check the body, build the submission, store it, answer. Each step is a function of what the
 * steps before it returned; nothing is left in the request's context for a later step to find.
 */
import { isAllowedPage, pageUrl } from "../../auth/page-origin.ts";
import type { Principal } from "../../auth/principal.ts";
import { checkSubmissionData } from "../../data-limits.ts";
import { deviceFromUserAgent } from "../../device.ts";
import type { Answer } from "../../http/answer.ts";
import { HttpError } from "../../http/errors.ts";
import { formatInstant } from "../../instant.ts";
import type { ApiRequest, RequestHead } from "../../http/request.ts";
import type { CreateSubmissionBody } from "../../schemas.ts";
import { MAX_FIELD_LENGTHS, type Submission } from "../../submission.ts";
import { type Caller, checkKey } from "../access.ts";
import type { RequestContext } from "../context.ts";
import { answerCreated, type Created } from "./answer.ts";
import { type CreateBody, isFormPost, readCreateBody } from "./body.ts";
import { readCreateFields } from "./fields.ts";
import { IDEMPOTENCY_TTL_MS, idempotencyKeyOf, keyedIdempotencyKey, requestFingerprint, reusedKey } from "./idempotency.ts";
import { countCreate } from "./rate-limit.ts";

export async function createSubmission(request: ApiRequest, context: RequestContext): Promise<Answer> {
  // A form may carry its key in its `_key` field, so a form's body is read before the key
  // check. Any other body waits for it: an unauthenticated client cannot make the server
  // buffer anything.
  const formBody = isFormPost(request) ? await readCreateBody(request, context.limits) : undefined;
  const caller = await checkKey(request, context, "create", formBody?.form?.key);
  const rateLimitFields = await countCreate(request, context, caller);
  try {
    const body = formBody ?? (await readCreateBody(request, context.limits));
    const checked = await check(body, request, context, caller.principal);
    const submission = build(checked.fields, request, context);
    const created = await store(submission, body, checked.idempotencyKey, context, caller);
    const answer = answerCreated(created, request, {
      principal: caller.principal, basePath: context.basePath, isForm: body.form !== undefined, redirect: checked.redirect,
    });
    Object.assign(answer.headers, rateLimitFields);
    return answer;
  } catch (error) {
    // Every answer to a counted create says where its key stands, a refusal too.
    if (error instanceof HttpError) Object.assign(error.headers, rateLimitFields);
    throw error;
  }
}

interface Checked {
  fields: CreateSubmissionBody;
  redirect: URL | undefined;
  idempotencyKey: string | undefined;
}

/** Everything a create must pass before anything is built: each failure a 4xx naming the field. */
async function check(body: CreateBody, request: RequestHead, context: RequestContext, principal: Principal): Promise<Checked> {
  const fields = readCreateFields(body.fields) ?? (await validateCreateFields(body.fields));
  checkSubmissionData(fields.data, context.limits);
  if (principal.kind === "publishable") refuseServerFields(fields);
  return { fields, redirect: redirectTarget(body.form?.redirect, principal), idempotencyKey: idempotencyKeyOf(request) };
}

/** What `readCreateFields` leaves to arktype, loaded then (src/handler.ts says why): every 400 among it. */
async function validateCreateFields(fields: unknown): Promise<CreateSubmissionBody> {
  const [{ createSubmissionBody }, { validate }] = await Promise.all([import("../../schemas.ts"), import("../../validate.ts")]);
  return validate(createSubmissionBody, fields, "submission");
}

/** Fields only a server may set: a page's domain, user agent and device come from its request. */
function refuseServerFields(fields: CreateSubmissionBody): void {
  for (const field of ["domain", "userAgent", "device"] as const) {
    if (fields[field] !== undefined) {
      throw new HttpError(403, `${field} can only be set with a secret key; with a publishable key it comes from the request`);
    }
  }
}

/**
 * The form's `_redirect` as a URL the browser may be sent to: absolute http(s), on one of the
 * key's domains, so that formsink is never an open redirect. Secret keys list no domains, so
 * `_redirect` is for publishable keys' forms.
 */
function redirectTarget(text: string | undefined, principal: Principal): URL | undefined {
  if (text === undefined) return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || !isAllowedPage(url, principal.domains)) {
    throw new HttpError(400, "_redirect must be an absolute http(s) URL on one of the key's domains");
  }
  return url;
}

/**
 * The submission: every field the create schema declares, as the client sent it, then what
 * the service derives or sets itself. A new optional field a client may send needs only the
 * schema and the `Submission` type, not this step.
 */
function build(fields: CreateSubmissionBody, request: RequestHead, context: RequestContext): Submission {
  // A header longer than any browser sends is cut, not refused: the lead still counts.
  const userAgent = fields.userAgent ?? request.headers.get("user-agent")?.slice(0, MAX_FIELD_LENGTHS.userAgent) ?? "";
  // createdAt is the time inside the UUIDv7, so the two always agree.
  const { id, millis } = context.newSubmissionId();
  return {
    submissionId: id,
    ...fields,
    domain: fields.domain ?? pageUrl(request)?.hostname ?? "",
    userAgent,
    device: fields.device ?? deviceFromUserAgent(userAgent),
    status: "pending",
    createdAt: formatInstant(millis),
  };
}

/** Stores the submission: once per Idempotency-Key when the request has one, not at all for a bot. */
async function store(
  submission: Submission,
  body: CreateBody,
  idempotencyKey: string | undefined,
  context: RequestContext,
  { principal, keyName }: Caller,
): Promise<Created> {
  // A bot filled the hidden field: it gets the answer a person would, and nothing is kept.
  if (body.honeypot) return { submission, replayed: false };
  if (idempotencyKey === undefined) {
    await context.store.insertSubmission(principal.accountId, submission);
    return { submission, replayed: false };
  }
  const fingerprint = await requestFingerprint(body);
  const now = Date.now();
  const outcome = await context.store.insertSubmissionOnce(
    principal.accountId,
    submission,
    { key: keyedIdempotencyKey(idempotencyKey, keyName), fingerprint, expiresAt: now + IDEMPOTENCY_TTL_MS },
    now,
  );
  if (outcome.inserted) return { submission, replayed: false };
  if (outcome.fingerprint !== fingerprint) throw reusedKey();
  return { submission: outcome.submission, replayed: true };
}
