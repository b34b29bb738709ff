/**
 * A received webhook delivery checked the way a receiver checks it: with the `standardwebhooks`
 * package, a verifier formsink did not write. No node:* import, so that workerd's tests use it.
 */
import { Webhook } from "standardwebhooks";

export interface ReceivedDelivery {
  /** The request's path. */
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** The delivery's payload when `secret` verifies it (as a receiver using `standardwebhooks` does); throws otherwise. */
export function verifyDelivery(secret: string, delivery: ReceivedDelivery): unknown {
  return new Webhook(secret).verify(delivery.body, {
    "webhook-id": delivery.id,
    "webhook-timestamp": delivery.timestamp,
    "webhook-signature": delivery.signature,
  });
}

/** True when `secret` verifies the delivery. */
export function verifies(secret: string, delivery: ReceivedDelivery): boolean {
  try {
    verifyDelivery(secret, delivery);
    return true;
  } catch {
    return false;
  }
}
