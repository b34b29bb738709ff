import type { Submission, SubmissionStatus } from "./submission.js";
/**
 * The one interface every storage backend implements (memory, libSQL, ...). The handler knows
 * nothing else about storage; `test/stores/conformance.ts` is the executable form of this
 * contract and every store runs it unchanged.
 *
 * Every submission method takes the account id first: a store never answers across accounts.
 */
export interface SubmissionStore {
    /** Stores a new submission. Ids are unique within an account. */
    insertSubmission(accountId: string, submission: Submission): Promise<void>;
    getSubmission(accountId: string, submissionId: string): Promise<Submission | undefined>;
    /** One page in a total, stable order (`createdAt`, then `submissionId`) plus the filtered total. */
    listSubmissions(accountId: string, query: SubmissionQuery): Promise<SubmissionPage>;
    /** False when the account has no such submission. Setting the current status is a success. */
    setSubmissionStatus(accountId: string, submissionId: string, status: SubmissionStatus): Promise<boolean>;
    /** Removes the row for good; false when the account has no such submission. */
    deleteSubmission(accountId: string, submissionId: string): Promise<boolean>;
    /** The account with this name, created on first use. */
    ensureAccount(name: string): Promise<Account>;
    insertApiKey(key: ApiKeyRecord): Promise<void>;
    /** The key with this public id (the part after the kind prefix), revoked or not. */
    findApiKey(keyId: string): Promise<ApiKeyRecord | undefined>;
    listApiKeys(filter?: {
        accountName?: string;
    }): Promise<ApiKeyListing[]>;
    /** Marks the key revoked (keeps the first revocation time); undefined when no such key. */
    revokeApiKey(keyId: string, revokedAt: string): Promise<ApiKeyRecord | undefined>;
    /** Releases connections and files; the store is unusable afterwards. */
    close(): Promise<void>;
}
export interface SubmissionFilter {
    popupId?: string;
    domain?: string;
    device?: string;
    status?: SubmissionStatus;
    /** Exclusive lower bound on `createdAt`, in epoch milliseconds (may carry a fraction). */
    createdAfter?: number;
    /** Exclusive upper bound on `createdAt`, in epoch milliseconds (may carry a fraction). */
    createdBefore?: number;
}
export interface SubmissionQuery extends SubmissionFilter {
    order: "asc" | "desc";
    limit: number;
    offset: number;
}
export interface SubmissionPage {
    items: Submission[];
    /** Every submission matching the filter, regardless of limit and offset. */
    total: number;
}
export interface Account {
    id: string;
    name: string;
    createdAt: string;
}
export type ApiKeyKind = "secret" | "publishable";
/** A key as stored: never the key itself, only its SHA-256 hash. */
export interface ApiKeyRecord {
    /** Random public id; the key's readable prefix is `fs_<kind>_<id>`. */
    id: string;
    accountId: string;
    kind: ApiKeyKind;
    /** Hex SHA-256 of the whole key text. */
    hash: string;
    /** Hosts a publishable key may be used from (empty for secret keys). */
    domains: string[];
    createdAt: string;
    revokedAt: string | null;
}
/** What `keys list` shows: everything but the hash. */
export interface ApiKeyListing extends Omit<ApiKeyRecord, "hash"> {
    accountName: string;
}
