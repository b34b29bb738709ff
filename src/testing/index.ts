/**
 * `formsink/testing`: the store contract as tests, for a store of your own and for formsink's.
 * Each function registers its tests with the `test` (or `it`) of the runner you use; none
 * needs a test library or Node, so they run wherever your store does.
 *
 * A store is done when `testSubmissionStore` passes; run `testKeyStore` and
 * `testRateLimitCounters`, `testPrivacyStore`, `testEventLog` and `testWebhookStore` too when it
 * implements those interfaces.
 */
export { testSubmissionStore } from "./submission-store.ts";
export { testKeyStore } from "./key-store.ts";
export { testRateLimitCounters } from "./rate-limit-counters.ts";
export { type PrivacySuiteOptions, testPrivacyStore } from "./privacy.ts";
export { testEventLog } from "./event-log.ts";
export { testWebhookStore } from "./webhooks.ts";
export type { RegisterTest, StoreSuiteOptions } from "./suite.ts";
export { AssertionError } from "./assert.ts";
