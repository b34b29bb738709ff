/**
 * Erasure by data subject: every submission of an account whose identifying field holds a
 * value is deleted, and a receipt says so later without keeping the value (only its HMAC under
 * the deployment's key: see docs/privacy.md for what that protects against).
 */
import { toHex } from "../hex.ts";
import { HttpError } from "../http/errors.ts";
import {
  deleteSubmissions, type ErasureReceipt, findSubmissionsByIdentifier, identifierKey, type PrivacyStore, type SubmissionStore,
} from "../store.ts";

export interface ErasureRequest {
  field: string;
  value: string;
  /** Find and count the matches, delete nothing, keep no receipt. */
  dryRun?: boolean;
}

/** What an erasure answers: the receipt without the hash, or for a dry run what it would delete. */
export interface ErasureResult extends Omit<ErasureReceipt, "valueHash" | "erasureId"> {
  /** The receipt's id; null for a dry run, which keeps none. */
  erasureId: string | null;
  dryRun: boolean;
}

/** Ids per delete: each batch is one short write transaction. */
const DELETE_BATCH = 500;

/**
 * Erases `request.value` from the account. A field the store does not index is refused (400,
 * naming the ones it does); a store without an index accepts any field and walks the account.
 */
export async function erase(
  store: SubmissionStore & PrivacyStore,
  accountId: string,
  request: ErasureRequest,
  now: () => Date = () => new Date(),
): Promise<ErasureResult> {
  const { field, value, dryRun = false } = request;
  const indexed = store.identifyingFields;
  if (indexed !== undefined && !indexed.includes(field)) {
    throw new HttpError(
      400,
      `field must be one of the identifying fields this deployment indexes: ${indexed.join(", ") || "(none)"} (was "${field}")`,
    );
  }
  const requestedAt = now().toISOString();
  const matches = await findSubmissionsByIdentifier(store, accountId, field, value);
  const deleted: string[] = [];
  if (!dryRun) {
    for (let from = 0; from < matches.length; from += DELETE_BATCH) {
      deleted.push(...(await deleteSubmissions(store, accountId, matches.slice(from, from + DELETE_BATCH), "erasure")));
    }
  }
  const result = {
    field,
    matched: matches.length,
    deleted: deleted.length,
    submissionIds: dryRun ? matches : deleted,
    requestedAt,
    completedAt: now().toISOString(),
  };
  if (dryRun) return { erasureId: null, ...result, dryRun };
  const receipt: ErasureReceipt = { erasureId: crypto.randomUUID(), ...result, valueHash: await erasureValueHash(store, field, value) };
  await store.insertErasureReceipt(accountId, receipt);
  return publicReceipt(receipt);
}

/** A kept receipt as the API shows it: without the hash, which only the deployment can check. */
export function publicReceipt({ valueHash: _valueHash, ...receipt }: ErasureReceipt): ErasureResult {
  return { ...receipt, dryRun: false };
}

/**
 * Hex HMAC-SHA256 of the field and the value as compared (an email lower-cased), under the
 * deployment's key: the same person's erasures share a hash, which no one without the key can
 * test a guessed email against.
 */
export async function erasureValueHash(store: PrivacyStore, field: string, value: string): Promise<string> {
  const keyHex = await store.erasureHashKey();
  const keyBytes = new Uint8Array(keyHex.match(/../g)!.map((byte) => parseInt(byte, 16)));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${field}\n${identifierKey(field, value)}`));
  return toHex(mac);
}
