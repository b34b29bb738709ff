/**
 * The request schemas: the single source of truth for what the API accepts. The handler
 * validates with these, and their constraints are the seed's (section 4.1, section 8) and the
 * contract's; nothing else restates them.
 */
import { type } from "arktype";
import { afterBound, beforeBound, parseInstant } from "./instant.js";
import { DEVICES, SUBMISSION_STATUSES } from "./submission.js";
export const submissionStatus = type.enumerated(...SUBMISSION_STATUSES);
export const device = type.enumerated(...DEVICES);
const popupId = type("1 <= string <= 256");
const domain = type("1 <= string <= 512");
/** Query integers are base-10 digits only: `1e1`, `10.0`, ` 5` and the empty string are refused. */
const digits = type(/^\d+$/).describe("a whole number written in digits");
/** An ISO 8601 instant with a zone. */
const instant = type("string")
    .narrow((text, ctx) => parseInstant(text) !== undefined || ctx.mustBe("an ISO 8601 instant such as 2025-07-12T10:30:00Z"))
    .pipe((text) => parseInstant(text));
export const LIST_QUERY_PARAMETERS = [
    "limit", "offset", "popupId", "domain", "device", "status", "orderBy", "createdAfter", "createdBefore",
];
export const listQuery = type({
    limit: digits.pipe(Number).to("1 <= number <= 100").default("10"),
    offset: digits.pipe(Number).to(`0 <= number <= ${Number.MAX_SAFE_INTEGER}`).default("0"),
    "popupId?": popupId,
    "domain?": domain,
    "device?": "1 <= string <= 128",
    "status?": submissionStatus,
    orderBy: type.enumerated("created_at", "created_at_desc").default("created_at_desc"),
    // Exclusive bounds, as whole epoch milliseconds that select exactly what the instant does.
    "createdAfter?": instant.pipe(afterBound),
    "createdBefore?": instant.pipe(beforeBound),
});
/** A JSON object (not an array); its size and shape limits are checked by `checkSubmissionData`. */
const submissionData = type("Record<string, unknown>")
    .narrow((value, ctx) => !Array.isArray(value) || ctx.mustBe("an object"))
    .as();
export const createSubmissionBody = type({
    popupId,
    data: submissionData,
    "domain?": domain,
    "device?": device,
    "userAgent?": "string <= 1024",
}).onUndeclaredKey("reject");
export const statusUpdateBody = type({ status: submissionStatus }).onUndeclaredKey("reject");
