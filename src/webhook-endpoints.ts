/**
 * Webhook endpoints as an account manages them: adding one (its id, its first secret, the
 * per-account limit and the URL policy), changing it, rotating its secret, and what the API
 * shows of it and of its delivery log. The routes (`/api/webhooks`) and `formsink webhooks`
 * both go through here.
 */
import { formatInstant } from "./instant.ts";
import { randomHex } from "./hex.ts";
import { HttpError } from "./http/errors.ts";
import type { CreateWebhookBody, DeliveryListBody, UpdateWebhookBody, WebhookBody, WebhookWithSecretBody } from "./schemas.ts";
import { type DeliveryPage, type WebhookChange, type WebhookRecord, type WebhookStore, WebhookLimitReached } from "./store.ts";
import { signingSecrets } from "./webhooks/signing.ts";
import { checkDeliveryUrl, WebhookRefused } from "./webhooks/transport.ts";

/** How many endpoints an account may have unless the deployment says otherwise. */
export const DEFAULT_MAX_WEBHOOKS = 20;

/** How long the secret before a rotation keeps signing beside the new one. */
const PREVIOUS_SECRET_SIGNS_MS = 24 * 60 * 60 * 1000;

export interface WebhookPolicy {
  /** The most endpoints one account may have. */
  maxWebhooks: number;
  /** Lets an endpoint be `http` or name a private or loopback address (for local work). */
  allowPrivateWebhooks: boolean;
}

/** A new endpoint and its secret, shown this once. */
interface AddedWebhook {
  webhook: WebhookRecord;
  secret: string;
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** Adds an endpoint for the account; 409 when it has as many as the policy allows. */
export async function addWebhook(
  store: WebhookStore,
  accountId: string,
  body: CreateWebhookBody,
  policy: WebhookPolicy,
  now = Date.now(),
): Promise<AddedWebhook> {
  checkUrlPolicy(body.url, policy);
  const full = () => new HttpError(409, `This account has ${policy.maxWebhooks} webhooks, the most it may have (${policy.maxWebhooks}): delete one first`);
  // Checked here for a store that does not count in its insert (`most` is optional), and there
  // for creates at once.
  if ((await store.listWebhooks(accountId)).length >= policy.maxWebhooks) throw full();
  const secret = newWebhookSecret();
  const webhook: WebhookRecord = {
    webhookId: `wh_${randomHex(16)}`,
    url: body.url,
    types: body.types ? [...new Set(body.types)] : null,
    popupId: body.popupId ?? null,
    description: body.description ?? null,
    createdAt: formatInstant(now),
    disabledAt: null,
    secrets: [secret],
    previousSecretExpiresAt: null,
    failingSince: null,
  };
  try {
    await store.insertWebhook(accountId, webhook, policy.maxWebhooks);
  } catch (error) {
    throw error instanceof WebhookLimitReached ? full() : error;
  }
  return { webhook, secret };
}

/** Applies a PATCH body; undefined when the account has no such endpoint. */
export async function changeWebhook(
  store: WebhookStore,
  accountId: string,
  webhookId: string,
  body: UpdateWebhookBody,
  policy: WebhookPolicy,
  now = Date.now(),
): Promise<WebhookRecord | undefined> {
  const { enabled, types, ...fields } = body;
  if (fields.url !== undefined) checkUrlPolicy(fields.url, policy);
  const change: WebhookChange = { ...fields };
  if (types !== undefined) change.types = types === null ? null : [...new Set(types)];
  if (enabled !== undefined) {
    const current = await store.getWebhook(accountId, webhookId);
    if (!current) return undefined;
    // Disabling keeps the first time it was disabled; enabling clears it, and the failures
    // that may have disabled it, so that days of them are counted afresh.
    if (enabled) Object.assign(change, { disabledAt: null, failingSince: null });
    else if (current.disabledAt === null) change.disabledAt = formatInstant(now);
  }
  return store.updateWebhook(accountId, webhookId, change);
}

/**
 * Makes a new secret the one that signs, with the current one signing beside it for
 * `PREVIOUS_SECRET_SIGNS_MS` (one before that stops); undefined when there is no such endpoint.
 */
export async function rotateWebhookSecret(store: WebhookStore, accountId: string, webhookId: string, now = Date.now()): Promise<AddedWebhook | undefined> {
  const current = await store.getWebhook(accountId, webhookId);
  if (!current) return undefined;
  const secret = newWebhookSecret();
  const webhook = await store.updateWebhook(accountId, webhookId, {
    secrets: [secret, current.secrets[0]!],
    previousSecretExpiresAt: now + PREVIOUS_SECRET_SIGNS_MS,
  });
  return webhook && { webhook, secret };
}

/** What the API shows of an endpoint: everything but its secrets. */
export function publicWebhook(webhook: WebhookRecord, now = Date.now()): WebhookBody {
  const previousSigns = signingSecrets(webhook, now).length > 1;
  return {
    webhookId: webhook.webhookId,
    url: webhook.url,
    types: webhook.types,
    popupId: webhook.popupId,
    description: webhook.description,
    createdAt: webhook.createdAt,
    disabledAt: webhook.disabledAt,
    previousSecretExpiresAt: previousSigns ? formatInstant(webhook.previousSecretExpiresAt!) : null,
  };
}

/** A page of the delivery log as the API shows it: the cursor as text, no positions. */
export function publicDeliveryPage(page: DeliveryPage): DeliveryListBody {
  return {
    items: page.deliveries.map(({ position: _position, ...delivery }) => delivery),
    nextCursor: page.cursor === null ? null : String(page.cursor),
  };
}

/** An endpoint with the secret it was just given. */
export function webhookWithSecret({ webhook, secret }: AddedWebhook, now = Date.now()): WebhookWithSecretBody {
  return { ...publicWebhook(webhook, now), secret };
}

/**
 * The URL policy at creation, so that a mistake is a 400 now rather than a delivery refused
 * later: the dispatcher's own rules for what a URL alone tells (https, no private or loopback
 * address literal, no local name) unless the deployment allows private webhooks. The
 * dispatcher checks again at every delivery, after DNS resolution.
 */
function checkUrlPolicy(url: string, policy: WebhookPolicy): void {
  try {
    checkDeliveryUrl(url, { allowPrivate: policy.allowPrivateWebhooks });
  } catch (error) {
    if (!(error instanceof WebhookRefused)) throw error;
    throw new HttpError(
      400,
      `url is refused (${error.reason}): this deployment delivers webhooks only to https URLs of public addresses; ` +
        // The same handler runs under formsink serve and mounted in a host app: name both switches.
        "--allow-private-webhooks (the handler's allowPrivateWebhooks option) lifts that for local work",
    );
  }
}
