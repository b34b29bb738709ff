/**
 * formsink's own stores against the very suites `formsink/testing` exports, registered with
 * uvu: every store file (and the Bun, Deno and workerd runs) is one call of this.
 */
import { suite } from "uvu";
import type { CompleteStore } from "../../src/store.ts";
import { testEventLog, testKeyStore, testPrivacyStore, testRateLimitCounters, testSubmissionStore, testWebhookStore } from "../../src/testing/index.ts";

type Open<S> = (options?: { identifyingFields?: readonly string[] }) => Promise<S>;

/** `open` gives a fresh store; with `identifyingFields`, one that indexes those. */
export function testCompleteStore(name: string, open: Open<CompleteStore>): void {
  const test = suite(`store conformance: ${name}`);
  testSubmissionStore({ test, open });
  testKeyStore({ test, open });
  testRateLimitCounters({ test, open });
  testPrivacyStore({ test, open });
  testEventLog({ test, open });
  testWebhookStore({ test, open });
  test.run();
}
