/** The domain model every part of formsink speaks: a submission and its fields. */
export const SUBMISSION_STATUSES = ["pending", "completed"];
/** What the service derives from a User-Agent; the contract fixes this list. */
export const DEVICES = ["desktop", "mobile", "tablet", "bot", "unknown"];
