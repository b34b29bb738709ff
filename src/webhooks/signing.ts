/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` with the secret's bytes (the base64 after `whsec_`), in base64,
 * each prefixed `v1,`; several are separated by spaces, so a receiver that knows either secret
 * of a rotation verifies. WebCrypto only, so it runs in every runtime.
 */
import type { WebhookRecord } from "../store.ts";

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();
/** Imported keys by secret: signing happens per delivery, importing once per secret is enough. */
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
const keys = new Map<string, Promise<HmacKey>>();
const MAX_CACHED_KEYS = 1000;

function keyOf(secret: string): Promise<HmacKey> {
  let key = keys.get(secret);
  if (!key) {
    if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a webhook secret starts with whsec_");
    const bytes = Uint8Array.from(atob(secret.slice(SECRET_PREFIX.length)), (c) => c.charCodeAt(0));
    key = crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(secret, key);
  }
  return key;
}

function base64(bytes: ArrayBuffer): string {
  let binary = "";
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The secrets that sign at `now`: the newest, and the one before it until it expires. */
export function signingSecrets(webhook: Pick<WebhookRecord, "secrets" | "previousSecretExpiresAt">, now: number): string[] {
  const [newest, previous] = webhook.secrets;
  if (newest === undefined) return [];
  const previousSigns = previous !== undefined && webhook.previousSecretExpiresAt !== null && now < webhook.previousSecretExpiresAt;
  return previousSigns ? [newest, previous] : [newest];
}

/** The `webhook-signature` header's value for this message, one `v1,` signature per secret. */
export async function signWebhook(secrets: readonly string[], id: string, timestamp: number, body: string): Promise<string> {
  const content = encoder.encode(`${id}.${timestamp}.${body}`);
  const signatures = await Promise.all(secrets.map(async (secret) => `v1,${base64(await crypto.subtle.sign("HMAC", await keyOf(secret), content))}`));
  return signatures.join(" ");
}
