import { isKeyStore, type KeyStore, type SubmissionStore } from "../store.ts";
import { constantTimeEqual, hashApiKey, parseApiKey } from "./api-key.ts";
import type { Authenticate } from "./principal.ts";

// Compared against when the key's id is unknown, so that an unknown key costs the same hash
// and comparison as a wrong secret for a known id.
const NO_HASH = "0".repeat(64);

/** Keys remembered as verified, at most; the oldest is forgotten first. */
const MAX_VERIFIED_KEYS = 10_000;

interface VerifiedKey {
  /** The key text whose SHA-256 matched... */
  text: string;
  /** ...this stored hash. */
  hash: string;
}

/**
 * Authenticates against the keys in the store. The key's record is asked of the store on every
 * request, which answers as the database stands at that moment, so a revocation - by this
 * process or another one on the same database (`formsink keys revoke`) - takes effect on the
 * very next request. What is done once per key is the SHA-256 of the key text (a Web Crypto
 * digest call costs Node more than the rest of a request): a key text that matched its record's
 * hash before is compared, in constant time, with the text remembered for that key id instead.
 * Only keys that matched are remembered, so wrong or unknown keys cannot fill the memory, and
 * they pay the hash as before.
 */
export function authenticateWithStore(store: KeyStore | SubmissionStore): Authenticate {
  if (!isKeyStore(store)) {
    throw new TypeError("this store keeps no API keys (it has no findApiKey): pass options.authenticate to check keys yourself");
  }
  const verified = new Map<string, VerifiedKey>();
  return async (apiKey) => {
    const parsed = parseApiKey(apiKey);
    const record = parsed ? await store.findApiKey(parsed.id) : undefined;
    const known = record && verified.get(record.id);
    let matches = known !== undefined && known.hash === record!.hash && constantTimeEqual(known.text, apiKey);
    if (!matches) {
      matches = constantTimeEqual(await hashApiKey(apiKey), record?.hash ?? NO_HASH);
      if (matches && record) {
        if (verified.size >= MAX_VERIFIED_KEYS) verified.delete(verified.keys().next().value!);
        verified.set(record.id, { text: apiKey, hash: record.hash });
      }
    }
    if (!record || !matches || record.revokedAt !== null || record.kind !== parsed?.kind) return undefined;
    return { accountId: record.accountId, kind: record.kind, domains: record.domains, keyId: record.id };
  };
}
