import type { WebhookRecord } from "../../src/store.ts";

/** A signing secret in the Standard Webhooks form. */
export function newSecret(): string {
  return `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`;
}

/** An enabled endpoint for every event, at `url`, with one fresh secret. */
export function webhookFor(url: string, overrides: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    webhookId: `wh_${crypto.randomUUID().replaceAll("-", "")}`,
    url,
    types: null,
    popupId: null,
    description: null,
    createdAt: new Date().toISOString(),
    disabledAt: null,
    secrets: [newSecret()],
    previousSecretExpiresAt: null,
    failingSince: null,
    ...overrides,
  };
}
