/** The library API for accounts and keys; the CLI's `keys` commands are a thin layer over it. */
import type { ApiKeyKind, ApiKeyRecord, SubmissionStore } from "../store.js";
export interface CreateApiKeyOptions {
    /** The account's name; the account is created if it does not exist yet. */
    account: string;
    kind?: ApiKeyKind;
    /** Hosts a publishable key may be used from (lower-cased; `example.com`, `shop.example.com:8443`). */
    domains?: readonly string[];
}
export interface CreatedApiKey {
    /** The key text. It is not stored anywhere: show it once and let the user keep it. */
    key: string;
    prefix: string;
    record: ApiKeyRecord;
}
export declare function createApiKey(store: SubmissionStore, options: CreateApiKeyOptions): Promise<CreatedApiKey>;
/**
 * Revokes a key named by its prefix (`fs_sk_<id>`), its id, or the whole key text.
 * Returns the revoked record, or undefined when there is no such key.
 */
export declare function revokeApiKey(store: SubmissionStore, name: string): Promise<ApiKeyRecord | undefined>;
