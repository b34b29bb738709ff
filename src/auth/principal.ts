import type { RequestHead } from "../http/request.ts";
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
 * Turns an API key (from the `x-api-key` header, or a form's `_key` field) into a principal,
 * or undefined for an unknown or revoked key. `request` is the request's method, URL and
 * headers (a Fetch `Request` has them too); its body is the handler's to read. The default
 * looks keys up in the store; a host app with its own key system passes its own.
 */
export type Authenticate = (apiKey: string, request: RequestHead) => Promise<Principal | undefined>;
