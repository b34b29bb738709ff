import type { ApiKeyKind } from "../store.ts";

/** Who a request acts for, as established from its API key. */
export interface Principal {
  accountId: string;
  kind: ApiKeyKind;
  /** Where a publishable key may be used (see `createApiKey`). */
  domains: readonly string[];
  /**
   * Names the key in rate-limit buckets (per key and client address). Without it, a hash of
   * the key text does.
   */
  keyId?: string;
}

/**
 * Turns the `x-api-key` header into a principal, or undefined for an unknown or revoked key.
 * The default looks keys up in the store; a host app with its own key system passes its own.
 */
export type Authenticate = (apiKey: string, request: Request) => Promise<Principal | undefined>;
