/**
 * API key text: `fs_sk_<id>_<secret>` (secret) or `fs_pk_<id>_<secret>` (publishable).
 * The readable prefix `fs_sk_<id>` tells the kind and names the key in lists and logs of the
 * CLI; the id finds the stored record, and the SHA-256 of the whole text is compared in
 * constant time. The secret part carries 238 bits of randomness, so a plain (fast) hash is
 * enough: there is nothing to brute-force.
 */
import { toHex } from "../hex.ts";
import type { ApiKeyKind } from "../store.ts";

const KIND_CODES: Record<ApiKeyKind, string> = { secret: "sk", publishable: "pk" };
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const ID_LENGTH = 12;
const SECRET_LENGTH = 40; // 40 * log2(62) = 238 bits
const KEY_TEXT = new RegExp(`^fs_(sk|pk)_([0-9A-Za-z]{${ID_LENGTH}})_[0-9A-Za-z]{${SECRET_LENGTH}}$`);

export interface NewApiKey {
  /** The key itself: shown once, never stored. */
  key: string;
  id: string;
  prefix: string;
  hash: string;
}

export async function generateApiKey(kind: ApiKeyKind): Promise<NewApiKey> {
  const id = randomText(ID_LENGTH);
  const prefix = `fs_${KIND_CODES[kind]}_${id}`;
  const key = `${prefix}_${randomText(SECRET_LENGTH)}`;
  return { key, id, prefix, hash: await hashApiKey(key) };
}

/** A key's text, or the start of one, anywhere in other text. */
const KEY_IN_TEXT = new RegExp(`fs_(?:sk|pk)_[0-9A-Za-z]{${ID_LENGTH}}_[0-9A-Za-z]+`, "g");

/**
 * `text` with every key in it replaced by `[API key]`: for what is logged of a request, whose
 * path holds a key when a client puts one there by mistake (keys in the query are refused).
 */
export function withoutApiKeys(text: string): string {
  return text.includes("fs_") ? text.replace(KEY_IN_TEXT, "[API key]") : text;
}

/** Kind and id of a well-formed key text, or undefined. */
export function parseApiKey(text: string): { kind: ApiKeyKind; id: string } | undefined {
  const match = KEY_TEXT.exec(text);
  if (!match) return undefined;
  return { kind: match[1] === "sk" ? "secret" : "publishable", id: match[2]! };
}

export function apiKeyPrefix(kind: ApiKeyKind, id: string): string {
  return `fs_${KIND_CODES[kind]}_${id}`;
}

export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return toHex(digest);
}

/** Compares two strings in time that depends only on their length, never on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false; // lengths are public: a hex SHA-256 is always 64 long
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

// Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
function randomText(length: number): string {
  let text = "";
  const bytes = new Uint8Array(length * 2);
  while (text.length < length) {
    crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      if (byte < 248 && text.length < length) text += ALPHABET[byte % 62];
    }
  }
  return text;
}
