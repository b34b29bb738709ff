/** The routes on stored submissions, for secret keys: each a plain function of (request, context). */
import type { Answer } from "../http/answer.ts";
import { jsonObject, readJsonBody } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import { jsonAnswer, jsonTextAnswer } from "../http/json.ts";
import { singleValuedQuery } from "../http/query.ts";
import type { ApiRequest } from "../http/request.ts";
import { isSubmissionId } from "../id.ts";
import { getSubmissionAsJson, listSubmissionsAsJson, placeOf, SUBMISSION_FILTER_FIELDS, type SubmissionFilter, type SubmissionQuery } from "../store.ts";
import { SUBMISSION_STATUSES, type SubmissionStatus } from "../submission.ts";
import { CURSOR_PROBLEMS, decodeListCursor, encodeListCursor } from "../list-cursor.ts";
import type { KeyedContext } from "./context.ts";
import { LIST_QUERY_PARAMETERS, type ListParameters, readListParameters } from "./list-parameters.ts";

/** The schemas and their check, loaded when a request needs them (src/handler.ts says why). */
const validation = () => Promise.all([import("../schemas.ts"), import("../validate.ts")]);

export async function listSubmissions(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const given = singleValuedQuery(context.url, LIST_QUERY_PARAMETERS);
  const parameters = readListParameters(given) ?? (await validateListQuery(given));
  const { limit, offset, cursor } = parameters;
  const { filter, query } = listQueryOf(parameters);
  const { order } = query;
  const accountId = context.principal.accountId;
  if (cursor === undefined) {
    // The items as the store wrote them (SQLite writes the JSON), not parsed and re-serialised.
    const page = await listSubmissionsAsJson(context.store, accountId, query);
    const more = page.last !== undefined && page.items.length === limit && offset + limit < page.total;
    const nextCursor = more ? `"${encodeListCursor(filter, order, page.last!)}"` : "null";
    return jsonTextAnswer(`{"items":[${page.items.join(",")}],"limit":${limit},"offset":${offset},"total":${page.total},"nextCursor":${nextCursor}}`);
  }
  if (given.offset !== undefined) throw new HttpError(400, "offset and cursor cannot be given together: the cursor says where the page starts");
  const decoded = decodeListCursor(cursor, filter, order);
  if (!decoded.ok) throw new HttpError(400, CURSOR_PROBLEMS[decoded.problem]);
  // Keyset paging: the page after the cursor's item, one more to know whether another follows.
  // The total is a list of one item, which every store answers from its counts or an index.
  const [items, { total }] = await Promise.all([
    context.store.walkSubmissions(accountId, { ...filter, order, limit: limit + 1, after: decoded.after }),
    context.store.listSubmissions(accountId, { ...filter, order, limit: 1, offset: 0 }),
  ]);
  const page = items.slice(0, limit);
  const nextCursor = items.length > limit ? encodeListCursor(filter, order, placeOf(page.at(-1)!)) : null;
  return jsonAnswer({ items: page, limit, offset: 0, total, nextCursor });
}

// bench/http.ts (list): an object rest (`...filter`) and a spread with properties after it cost
// V8 more than the rest of the route's own work; these are built field by field.
/** The filters given in `parameters`, and the query of the page they ask for. */
function listQueryOf(parameters: ListParameters): { filter: SubmissionFilter; query: SubmissionQuery } {
  const filter: Record<string, unknown> = {};
  const query: Record<string, unknown> = { order: parameters.orderBy === "created_at" ? "asc" : "desc", limit: parameters.limit, offset: parameters.offset };
  for (const field of SUBMISSION_FILTER_FIELDS) {
    const value = parameters[field];
    if (value !== undefined) filter[field] = query[field] = value;
  }
  return { filter: filter as SubmissionFilter, query: query as unknown as SubmissionQuery };
}

/** What `readListParameters` leaves to arktype: a query it does not read, and every 400. */
async function validateListQuery(given: Record<string, string>): Promise<ListParameters> {
  const [{ listQuery }, { validate }] = await validation();
  return validate(listQuery, given, "query");
}

export async function getSubmission(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  // As the store wrote it (SQLite writes the JSON), not parsed and re-serialised.
  const submission = await getSubmissionAsJson(context.store, context.principal.accountId, submissionIdParam(context));
  if (submission === undefined) throw submissionNotFound();
  return jsonTextAnswer(submission);
}

export async function updateSubmissionStatus(request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const submissionId = submissionIdParam(context);
  const body = jsonObject(await readJsonBody(request, context.limits));
  const status = readStatusUpdate(body) ?? (await validateStatusUpdate(body));
  const updated = await context.store.setSubmissionStatus(context.principal.accountId, submissionId, status);
  if (!updated) throw submissionNotFound();
  return jsonAnswer({ message: "Submission status updated", submissionId, status });
}

/**
 * The one body a status change takes, read without arktype so that the route does not load it
 * (src/handler.ts says why); anything else goes to `statusUpdateBody`, which words the 400.
 */
export function readStatusUpdate(body: Record<string, unknown>): SubmissionStatus | undefined {
  const { status } = body;
  if (typeof status !== "string" || !(SUBMISSION_STATUSES as readonly string[]).includes(status)) return undefined;
  for (const key in body) if (key !== "status") return undefined;
  return status as SubmissionStatus;
}

async function validateStatusUpdate(body: Record<string, unknown>): Promise<SubmissionStatus> {
  const [{ statusUpdateBody }, { validate }] = await validation();
  return validate(statusUpdateBody, body, "status update").status;
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
