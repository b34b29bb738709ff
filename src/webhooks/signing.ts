/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` with the secret's bytes (the base64 after `whsec_`), in base64,
 * each prefixed `v1,`; several are separated by spaces, so a receiver that knows either secret
 * of a rotation verifies. With WebCrypto, so it runs in every runtime, unless the transport
 * brings a cheaper HMAC (`WebhookTransport.hmacSha256`).
 */
import type { WebhookRecord } from "../store.ts";

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
/** Each secret's bytes, and its imported key once WebCrypto signed with it: signing happens per delivery, decoding once per secret is enough. */
const keys = new Map<string, { bytes: Uint8Array<ArrayBuffer>; imported?: Promise<HmacKey> }>();
const MAX_CACHED_KEYS = 1000;

function keyOf(secret: string): { bytes: Uint8Array<ArrayBuffer>; imported?: Promise<HmacKey> } {
  let key = keys.get(secret);
  if (!key) {
    if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a webhook secret starts with whsec_");
    key = { bytes: Uint8Array.from(atob(secret.slice(SECRET_PREFIX.length)), (c) => c.charCodeAt(0)) };
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(secret, key);
  }
  return key;
}

async function webCryptoSignature(secret: string, content: string): Promise<string> {
  const key = keyOf(secret);
  key.imported ??= crypto.subtle.importKey("raw", key.bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return base64(await crypto.subtle.sign("HMAC", await key.imported, encoder.encode(content)));
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

/**
 * The `webhook-signature` header's value for this message, one `v1,` signature per secret;
 * `hmacSha256` computes them when given (a transport's, `WebhookTransport.hmacSha256`).
 */
export async function signWebhook(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
  hmacSha256?: (key: Uint8Array, content: string) => string,
): Promise<string> {
  const content = `${id}.${timestamp}.${body}`;
  const signatures = hmacSha256
    ? secrets.map((secret) => hmacSha256(keyOf(secret).bytes, content))
    : await Promise.all(secrets.map((secret) => webCryptoSignature(secret, content)));
  return signatures.map((signature) => `v1,${signature}`).join(" ");
}
