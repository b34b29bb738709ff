/** formsink: form submissions from website popups, as one portable Fetch handler. */
export { createSubmissionsHandler } from "./handler.js";
export { DEFAULT_LIMITS } from "./options.js";
export { authenticateWithStore } from "./auth/store-authenticate.js";
export { createApiKey, revokeApiKey } from "./auth/keys.js";
export { apiKeyPrefix } from "./auth/api-key.js";
export { HttpError } from "./http/errors.js";
export { SUBMISSION_STATUSES, DEVICES } from "./submission.js";
