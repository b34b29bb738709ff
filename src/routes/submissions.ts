/** The routes on stored submissions, for secret keys: each a plain function of (request, context). */
import type { Answer } from "../http/answer.ts";
import { jsonObject, readJsonBody } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import { jsonAnswer } from "../http/json.ts";
import { singleValuedQuery } from "../http/query.ts";
import type { ApiRequest } from "../http/request.ts";
import { isSubmissionId } from "../id.ts";
import { LIST_QUERY_PARAMETERS, listQuery, statusUpdateBody } from "../schemas.ts";
import { validate } from "../validate.ts";
import type { KeyedContext } from "./context.ts";

export async function listSubmissions(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const query = validate(listQuery, singleValuedQuery(context.url, LIST_QUERY_PARAMETERS), "query");
  const { limit, offset, orderBy, ...filter } = query;
  const page = await context.store.listSubmissions(context.principal.accountId, {
    ...filter,
    order: orderBy === "created_at" ? "asc" : "desc",
    limit,
    offset,
  });
  return jsonAnswer({ items: page.items, limit, offset, total: page.total });
}

export async function getSubmission(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const submission = await context.store.getSubmission(context.principal.accountId, submissionIdParam(context));
  if (!submission) throw submissionNotFound();
  return jsonAnswer(submission);
}

export async function updateSubmissionStatus(request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const submissionId = submissionIdParam(context);
  const body = await readJsonBody(request, context.limits);
  const { status } = validate(statusUpdateBody, jsonObject(body), "status update");
  const updated = await context.store.setSubmissionStatus(context.principal.accountId, submissionId, status);
  if (!updated) throw submissionNotFound();
  return jsonAnswer({ message: "Submission status updated", submissionId, status });
}

export async function deleteSubmission(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const submissionId = submissionIdParam(context);
  const deleted = await context.store.deleteSubmission(context.principal.accountId, submissionId);
  if (!deleted) throw submissionNotFound();
  return jsonAnswer({ message: "Submission deleted", submissionId });
}

function submissionNotFound(): HttpError {
  return new HttpError(404, "Submission not found");
}

/** The id from the path; one that is not a UUID cannot exist, so it is a 404 like any other. */
function submissionIdParam(context: KeyedContext): string {
  const id = (context.params.submissionId ?? "").toLowerCase();
  if (!isSubmissionId(id)) throw submissionNotFound();
  return id;
}
