/** formsink: form submissions from website popups, as one portable Fetch handler. */
export { createSubmissionsHandler, type SubmissionsHandler } from "./handler.ts";
export type { SubmissionsHandlerOptions, Limits, LogEntry, RequestLogEntry, ErrorLogEntry } from "./options.ts";
export { DEFAULT_LIMITS } from "./options.ts";
export type { Authenticate, Principal } from "./auth/principal.ts";
export { authenticateWithStore } from "./auth/store-authenticate.ts";
export { createApiKey, revokeApiKey, type CreateApiKeyOptions, type CreatedApiKey } from "./auth/keys.ts";
export { apiKeyPrefix } from "./auth/api-key.ts";
export { HttpError } from "./http/errors.ts";
export type { SubmissionStore, SubmissionFilter, SubmissionQuery, SubmissionPage, Account, ApiKeyKind, ApiKeyRecord, ApiKeyListing, } from "./store.ts";
export type { Submission, SubmissionStatus, SubmissionData, Device, JsonValue } from "./submission.ts";
export { SUBMISSION_STATUSES, DEVICES } from "./submission.ts";
