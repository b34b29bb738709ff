/** The submission routes: each a plain function of (request, context). */
import { checkSubmissionData } from "../data-limits.ts";
import { deviceFromUserAgent } from "../device.ts";
import { jsonObject, readJsonBody } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import type { Answer } from "../http/answer.ts";
import { jsonAnswer } from "../http/json.ts";
import { singleValuedQuery } from "../http/query.ts";
import { isSubmissionId } from "../id.ts";
import { pageUrl } from "../auth/page-origin.ts";
import { type CreateSubmissionBody, createSubmissionBody, LIST_QUERY_PARAMETERS, listQuery, MAX_USER_AGENT_LENGTH, statusUpdateBody } from "../schemas.ts";
import type { Submission } from "../submission.ts";
import { validate } from "../validate.ts";
import { principalOf, type RequestContext, type RouteRequest } from "./context.ts";
import { createRequestOf, MAX_NESTING_SLACK } from "./create-request.ts";
import { createdResponse, redirectTarget } from "./create-response.ts";
import { IDEMPOTENCY_TTL_MS, idempotencyKeyOf, requestFingerprint, reusedKey } from "./idempotency.ts";

export async function listSubmissions(_request: RouteRequest, context: RequestContext): Promise<Answer> {
  const query = validate(listQuery, singleValuedQuery(context.url, LIST_QUERY_PARAMETERS), "query");
  const { limit, offset, orderBy, ...filter } = query;
  const page = await context.store.listSubmissions(principalOf(context).accountId, {
    ...filter,
    order: orderBy === "created_at" ? "asc" : "desc",
    limit,
    offset,
  });
  return jsonAnswer({ items: page.items, limit, offset, total: page.total });
}

export async function getSubmission(request: RouteRequest, context: RequestContext): Promise<Answer> {
  const submission = await context.store.getSubmission(principalOf(context).accountId, submissionIdParam(request));
  if (!submission) throw submissionNotFound();
  return jsonAnswer(submission);
}

export async function createSubmission(request: RouteRequest, context: RequestContext): Promise<Answer> {
  const principal = principalOf(context);
  const input = await createRequestOf(request, context);
  const body = validate(createSubmissionBody, input.body, "submission");
  checkSubmissionData(body.data, context.limits);
  if (principal.kind === "publishable") refuseServerFields(body);
  const redirect = redirectTarget(input, principal);
  const idempotencyKey = idempotencyKeyOf(request);

  // A header longer than any browser sends is cut, not refused: the lead still counts.
  const userAgent = body.userAgent ?? request.headers.get("user-agent")?.slice(0, MAX_USER_AGENT_LENGTH) ?? "";
  // createdAt is the time inside the UUIDv7, so the two always agree.
  const { id, millis } = context.newSubmissionId();
  let submission: Submission = {
    submissionId: id,
    popupId: body.popupId,
    data: body.data,
    domain: body.domain ?? pageUrl(request)?.hostname ?? "",
    userAgent,
    device: body.device ?? deviceFromUserAgent(userAgent),
    status: "pending",
    createdAt: new Date(millis).toISOString(),
  };
  let replayed = false;
  if (input.honeypot) {
    // A bot filled the hidden field: it gets the answer a person would, and nothing is kept.
  } else if (idempotencyKey === undefined) {
    await context.store.insertSubmission(principal.accountId, submission);
  } else {
    const fingerprint = await requestFingerprint(input);
    const now = Date.now();
    const outcome = await context.store.insertSubmissionOnce(
      principal.accountId,
      submission,
      { key: idempotencyKey, fingerprint, expiresAt: now + IDEMPOTENCY_TTL_MS },
      now,
    );
    if (!outcome.inserted) {
      if (outcome.fingerprint !== fingerprint) throw reusedKey();
      submission = outcome.submission;
      replayed = true;
    }
  }
  const location = `${context.basePath}/api/submission/${submission.submissionId}`;
  return createdResponse({ submission, replayed, location }, request, input, redirect, principal);
}

/** Fields only a server may set: a page's domain, user agent and device come from its request. */
function refuseServerFields(body: CreateSubmissionBody): void {
  for (const field of ["domain", "userAgent", "device"] as const) {
    if (body[field] !== undefined) {
      throw new HttpError(403, `${field} can only be set with a secret key; with a publishable key it comes from the request`);
    }
  }
}

export async function updateSubmissionStatus(request: RouteRequest, context: RequestContext): Promise<Answer> {
  const submissionId = submissionIdParam(request);
  const body = await readJsonBody(request, {
    maxBytes: context.limits.maxBodyBytes,
    maxNesting: context.limits.maxDataDepth + MAX_NESTING_SLACK,
  });
  const { status } = validate(statusUpdateBody, jsonObject(body), "status update");
  const updated = await context.store.setSubmissionStatus(principalOf(context).accountId, submissionId, status);
  if (!updated) throw submissionNotFound();
  return jsonAnswer({ message: "Submission status updated", submissionId, status });
}

export async function deleteSubmission(request: RouteRequest, context: RequestContext): Promise<Answer> {
  const submissionId = submissionIdParam(request);
  const deleted = await context.store.deleteSubmission(principalOf(context).accountId, submissionId);
  if (!deleted) throw submissionNotFound();
  return jsonAnswer({ message: "Submission deleted", submissionId });
}

function submissionNotFound(): HttpError {
  return new HttpError(404, "Submission not found");
}

/** The id from the path; one that is not a UUID cannot exist, so it is a 404 like any other. */
function submissionIdParam(request: RouteRequest): string {
  const id = (request.params.submissionId ?? "").toLowerCase();
  if (!isSubmissionId(id)) throw submissionNotFound();
  return id;
}
