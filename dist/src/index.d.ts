/** formsink: form submissions from website popups, as one portable Fetch handler. */
export { createSubmissionsHandler, type SubmissionsHandler } from "./handler.js";
export type { SubmissionsHandlerOptions, Limits, LogEntry, RequestLogEntry, ErrorLogEntry } from "./options.js";
export { DEFAULT_LIMITS } from "./options.js";
export type { Authenticate, Principal } from "./auth/principal.js";
export { authenticateWithStore } from "./auth/store-authenticate.js";
export { createApiKey, revokeApiKey, type CreateApiKeyOptions, type CreatedApiKey } from "./auth/keys.js";
export { apiKeyPrefix } from "./auth/api-key.js";
export { HttpError } from "./http/errors.js";
export type { SubmissionStore, SubmissionFilter, SubmissionQuery, SubmissionPage, Account, ApiKeyKind, ApiKeyRecord, ApiKeyListing, } from "./store.js";
export type { Submission, SubmissionStatus, SubmissionData, Device, JsonValue } from "./submission.js";
export { SUBMISSION_STATUSES, DEVICES } from "./submission.js";
