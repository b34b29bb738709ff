/**
 * API key text: `fs_sk_<id>_<secret>` (secret) or `fs_pk_<id>_<secret>` (publishable).
 * The readable prefix `fs_sk_<id>` tells the kind and names the key in lists and logs of the
 * CLI; the id finds the stored record, and the SHA-256 of the whole text is compared in
 * constant time. The secret part carries 238 bits of randomness, so a plain (fast) hash is
 * enough: there is nothing to brute-force.
 */
import type { ApiKeyKind } from "../store.js";
export interface NewApiKey {
    /** The key itself: shown once, never stored. */
    key: string;
    id: string;
    prefix: string;
    hash: string;
}
export declare function generateApiKey(kind: ApiKeyKind): Promise<NewApiKey>;
/** Kind and id of a well-formed key text, or undefined. */
export declare function parseApiKey(text: string): {
    kind: ApiKeyKind;
    id: string;
} | undefined;
export declare function apiKeyPrefix(kind: ApiKeyKind, id: string): string;
export declare function hashApiKey(key: string): Promise<string>;
/** Compares two strings in time that depends only on their length, never on where they differ. */
export declare function constantTimeEqual(a: string, b: string): boolean;
