import type { SubmissionStore } from "../store.ts";
import { constantTimeEqual, hashApiKey, parseApiKey } from "./api-key.ts";
import type { Authenticate } from "./principal.ts";

// Compared against when the key's id is unknown, so that an unknown key costs the same hash
// and comparison as a wrong secret for a known id.
const NO_HASH = "0".repeat(64);

/** Authenticates against the keys in the store; revocation is seen on the very next request. */
export function authenticateWithStore(store: SubmissionStore): Authenticate {
  return async (apiKey) => {
    const parsed = parseApiKey(apiKey);
    const record = parsed ? await store.findApiKey(parsed.id) : undefined;
    const hash = await hashApiKey(apiKey);
    const matches = constantTimeEqual(hash, record?.hash ?? NO_HASH);
    if (!record || !matches || record.revokedAt !== null || record.kind !== parsed?.kind) return undefined;
    return { accountId: record.accountId, kind: record.kind, domains: record.domains, keyId: record.id };
  };
}
