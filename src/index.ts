/** formsink: form submissions from website popups, as one portable Fetch handler. */
export { createSubmissionsHandler, type SubmissionsHandler } from "./handler.ts";
export type { SubmissionsHandlerOptions, Limits, LogEntry, RequestLogEntry, ErrorLogEntry, WarningLogEntry } from "./options.ts";
export { DEFAULT_LIMITS } from "./options.ts";
export {
  type ClientAddressSource, type ConnectionInfo, connectionAddress, forwardedForAddress,
} from "./rate-limit/client-address.ts";
export { createMemoryRateLimiter, type RateLimiter, type RateLimitPolicy, storeRateLimiter } from "./rate-limit/limiter.ts";
export { DEFAULT_PUBLISHABLE_RATE_LIMIT, type RateLimitOptions } from "./rate-limit/settings.ts";
export type { Authenticate, Principal } from "./auth/principal.ts";
export { authenticateWithStore } from "./auth/store-authenticate.ts";
export { createApiKey, revokeApiKey, type CreateApiKeyOptions, type CreatedApiKey } from "./auth/keys.ts";
export { apiKeyPrefix } from "./auth/api-key.ts";
export { HttpError } from "./http/errors.ts";
export type { ApiRequest, RequestHead } from "./http/request.ts";
export type { Answer } from "./http/answer.ts";
export {
  createRetentionJob, previewRetention, type RetentionJob, type RetentionJobOptions, type RetentionPreview, type RetentionRun,
} from "./privacy/retention.ts";
export { erase, type ErasureRequest, type ErasureResult } from "./privacy/erasure.ts";
export { DEFAULT_IDENTIFYING_FIELDS, identifierKey, isPrivacyStore } from "./store.ts";
export type { PrivacyStore, ErasureReceipt, RetentionRule } from "./store.ts";
export type {
  SubmissionStore, KeyStore, RateLimitCounters, CompleteStore, SubmissionFilter, SubmissionWalk, SubmissionCursor, SubmissionQuery, SubmissionPage, SubmissionTextPage, NdjsonPage, Account, ApiKeyKind, ApiKeyRecord, ApiKeyListing,
  IdempotencyRecord, IdempotentInsert, EventLog, EventQuery, EventPage, EventTextPage,
  StoreFaultKind,
} from "./store.ts";
export { ClaimAfterRecordingFailed, isEventLog, isWebhookStore, StoreUnavailable } from "./store.ts";
export type {
  WebhookStore, WebhookRecord, WebhookChange, DeliveryStatus, DeliveryClaim, ClaimedDelivery, DeliveryAttempt, RecordedAndClaimed, DeliveryQuery, Delivery,
  DeliveryPage,
} from "./store.ts";
export { createWebhookDispatcher, type AttemptReport, type WebhookDispatcher, type WebhookDispatcherOptions } from "./webhooks/dispatcher.ts";
export {
  checkDeliveryUrl, createFetchWebhookTransport, WebhookRefused, type WebhookRequest, type WebhookResponse, type WebhookTransport,
  type WebhookTransportOptions,
} from "./webhooks/transport.ts";
export { type ChangeEvent, type EventType, type StatusChange, type Tombstone, EVENT_TYPES, DEFAULT_EVENT_RETENTION_DAYS } from "./events.ts";
export { createEventPruner, type EventPruner, type EventPrunerOptions } from "./event-pruning.ts";
export type { Submission, SubmissionStatus, SubmissionData, Device, JsonValue, DeletionReason } from "./submission.ts";
export { SUBMISSION_STATUSES, DEVICES } from "./submission.ts";
