/** The submission routes: each a plain function of (request, context). */
import { checkSubmissionData } from "../data-limits.js";
import { deviceFromUserAgent } from "../device.js";
import { readJsonBody } from "../http/body.js";
import { HttpError } from "../http/errors.js";
import { jsonResponse } from "../http/json.js";
import { singleValuedQuery } from "../http/query.js";
import { isSubmissionId } from "../id.js";
import { createSubmissionBody, LIST_QUERY_PARAMETERS, listQuery, statusUpdateBody } from "../schemas.js";
import { validate } from "../validate.js";
import { principalOf } from "./context.js";
export async function listSubmissions(_request, context) {
    const query = validate(listQuery, singleValuedQuery(context.url, LIST_QUERY_PARAMETERS), "query");
    const { limit, offset, orderBy, ...filter } = query;
    const page = await context.store.listSubmissions(principalOf(context).accountId, {
        ...filter,
        order: orderBy === "created_at" ? "asc" : "desc",
        limit,
        offset,
    });
    return jsonResponse({ items: page.items, limit, offset, total: page.total });
}
export async function getSubmission(request, context) {
    const submission = await context.store.getSubmission(principalOf(context).accountId, submissionIdParam(request));
    if (!submission)
        throw submissionNotFound();
    return jsonResponse(submission);
}
export async function createSubmission(request, context) {
    const body = validate(createSubmissionBody, await readJsonObject(request, context), "submission");
    checkSubmissionData(body.data, context.limits);
    const userAgent = body.userAgent ?? request.headers.get("user-agent") ?? "";
    // createdAt is the time inside the UUIDv7, so the two always agree.
    const { id, millis } = context.newSubmissionId();
    const submission = {
        submissionId: id,
        popupId: body.popupId,
        data: body.data,
        domain: body.domain ?? pageHost(request) ?? "",
        userAgent,
        device: body.device ?? deviceFromUserAgent(userAgent),
        status: "pending",
        createdAt: new Date(millis).toISOString(),
    };
    await context.store.insertSubmission(principalOf(context).accountId, submission);
    return jsonResponse(submission, 201, {
        location: `${context.basePath}/api/submission/${submission.submissionId}`,
    });
}
export async function updateSubmissionStatus(request, context) {
    const submissionId = submissionIdParam(request);
    const { status } = validate(statusUpdateBody, await readJsonObject(request, context), "status update");
    const updated = await context.store.setSubmissionStatus(principalOf(context).accountId, submissionId, status);
    if (!updated)
        throw submissionNotFound();
    return jsonResponse({ message: "Submission status updated", submissionId, status });
}
export async function deleteSubmission(request, context) {
    const submissionId = submissionIdParam(request);
    const deleted = await context.store.deleteSubmission(principalOf(context).accountId, submissionId);
    if (!deleted)
        throw submissionNotFound();
    return jsonResponse({ message: "Submission deleted", submissionId });
}
const MAX_NESTING_SLACK = 16;
function submissionNotFound() {
    return new HttpError(404, "Submission not found");
}
/** The id from the path; one that is not a UUID cannot exist, so it is a 404 like any other. */
function submissionIdParam(request) {
    const id = (request.params.submissionId ?? "").toLowerCase();
    if (!isSubmissionId(id))
        throw submissionNotFound();
    return id;
}
async function readJsonObject(request, context) {
    const body = await readJsonBody(request, {
        maxBytes: context.limits.maxBodyBytes,
        // Room above the data depth limit, so that a body a little too deep still gets the precise
        // message of checkSubmissionData; only pathological nesting meets this one.
        maxNesting: context.limits.maxDataDepth + MAX_NESTING_SLACK,
    });
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw new HttpError(400, "Request body must be a JSON object");
    }
    return body;
}
/** The host of the page the request came from (Origin, else Referer), if it names one. */
function pageHost(request) {
    for (const header of ["origin", "referer"]) {
        const value = request.headers.get(header);
        if (!value)
            continue;
        try {
            const host = new URL(value).hostname;
            if (host)
                return host;
        }
        catch {
            // not a URL (e.g. `Origin: null`): try the next header
        }
    }
    return undefined;
}
