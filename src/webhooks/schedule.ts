/**
 * When a failed delivery is tried again: exponential backoff with jitter, the first retry within
 * seconds, for about three days after the first attempt; and when an endpoint that only fails is
 * disabled.
 */

const SECOND = 1000;
const HOUR = 60 * 60 * SECOND;
const DAY = 24 * HOUR;

/** How long after its first attempt a delivery is still retried. */
export const RETRY_FOR_MS = 3 * DAY;
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * DAY;
/** A receiver's answer must come within this long. */
export const ATTEMPT_TIMEOUT_MS = 10 * SECOND;

const FIRST_RETRY_MS = 4 * SECOND;
const GROWTH = 3;
const LONGEST_WAIT_MS = 6 * HOUR;

/**
 * When to make attempt number `attempts + 1`, after `attempts` failed ones, the last at `at` and
 * the first at `firstAttemptAt`; null when the delivery has been retried long enough. `random`
 * is in [0, 1): the wait is between half and one and a half times the backoff, so that many
 * deliveries failed at once do not come back at once.
 */
export function retryAt(attempts: number, firstAttemptAt: number, at: number, random: number): number | null {
  const backoff = Math.min(FIRST_RETRY_MS * GROWTH ** (attempts - 1), LONGEST_WAIT_MS);
  const next = at + Math.round(backoff * (0.5 + random));
  return next - firstAttemptAt > RETRY_FOR_MS ? null : next;
}
