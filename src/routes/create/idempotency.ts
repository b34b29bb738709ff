/**
 * `Idempotency-Key` on creates (draft-ietf-httpapi-idempotency-key-header): a retry with the
 * same key, API key and body within 24 hours gets the first answer instead of a duplicate; the
 * same key with another body is 422, as that draft says, because it is the client's mistake.
 */
import { toHex } from "../../hex.ts";
import { HttpError } from "../../http/errors.ts";
import type { RequestHead } from "../../http/request.ts";
import type { CreateBody } from "./body.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** What an Idempotency-Key may be; the OpenAPI document gives this pattern. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key, if it has one: 1 to 255 visible ASCII characters. */
export function idempotencyKeyOf(request: RequestHead): string | undefined {
  const key = request.headers.get("idempotency-key")?.trim();
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) throw new HttpError(400, "Idempotency-Key must be 1 to 255 visible ASCII characters, such as a UUID");
  return key;
}

/**
 * The Idempotency-Key as the store keeps it: per API key, not only per account. A publishable
 * key is in every page of a site, so anyone may send it; sharing the account's keys with it
 * would let anyone replay a server's create that had the same body (and learn its id, time and
 * user agent), or claim the keys a server will use so that its creates get 422. The client's key
 * holds no space (IDEMPOTENCY_KEY), so no two pairs make the same text.
 */
export function keyedIdempotencyKey(idempotencyKey: string, keyName: string): string {
  return `${idempotencyKey} ${keyName}`;
}

/** What a retry must repeat: the SHA-256 of the media type and the body bytes. */
export async function requestFingerprint(body: CreateBody): Promise<string> {
  const type = new TextEncoder().encode(`${body.mediaType}\n`);
  const whole = new Uint8Array(type.byteLength + body.bytes.byteLength);
  whole.set(type);
  whole.set(body.bytes, type.byteLength);
  const digest = await crypto.subtle.digest("SHA-256", whole);
  return toHex(digest);
}

export function reusedKey(): HttpError {
  return new HttpError(422, "This Idempotency-Key was already used for a different request body; use a new key for a new submission");
}
