/** The library API for accounts and keys; the CLI's `keys` commands are a thin layer over it. */
import type { ApiKeyKind, ApiKeyRecord, KeyStore } from "../store.ts";
import { generateApiKey } from "./api-key.ts";
import { isKeyDomain } from "./page-origin.ts";

export interface CreateApiKeyOptions {
  /** The account's name; the account is created if it does not exist yet. */
  account: string;
  kind?: ApiKeyKind;
  /**
   * Where a publishable key may be used (lower-cased): `example.com` (that host, any port),
   * `shop.example.com:8443` (that port only), `*.example.com` (every subdomain, not the domain itself).
   */
  domains?: readonly string[];
}

export interface CreatedApiKey {
  /** The key text. It is not stored anywhere: show it once and let the user keep it. */
  key: string;
  prefix: string;
  record: ApiKeyRecord;
}

const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export async function createApiKey(store: KeyStore, options: CreateApiKeyOptions): Promise<CreatedApiKey> {
  const { kind, domains } = checkApiKeyOptions(options);
  const account = await store.ensureAccount(options.account);
  const generated = await generateApiKey(kind);
  const record: ApiKeyRecord = {
    id: generated.id,
    accountId: account.id,
    kind,
    hash: generated.hash,
    domains,
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await store.insertApiKey(record);
  return { key: generated.key, prefix: generated.prefix, record };
}

/**
 * The key's kind and its domains (trimmed, lower-cased) when `options` make a valid key; throws
 * a RangeError saying what is wrong otherwise. `createApiKey` checks the same before it writes:
 * the CLI checks first so that a wrong command line opens (and creates) no database.
 */
export function checkApiKeyOptions(options: CreateApiKeyOptions): { kind: ApiKeyKind; domains: string[] } {
  const kind = options.kind ?? "secret";
  if (!ACCOUNT_NAME.test(options.account)) {
    throw new RangeError("account name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
  }
  const domains = (options.domains ?? []).map((domain) => domain.trim().toLowerCase());
  for (const domain of domains) {
    if (!isKeyDomain(domain)) {
      throw new RangeError(`domain "${domain}" is not a host name such as example.com, shop.example.com:8443 or *.example.com`);
    }
  }
  if (kind === "secret" && domains.length > 0) {
    throw new RangeError("domains apply to publishable keys only");
  }
  if (kind === "publishable" && domains.length === 0) {
    throw new RangeError("a publishable key needs at least one domain it may be used from");
  }
  return { kind, domains };
}

/**
 * Revokes a key named by its prefix (`fs_sk_<id>`), its id, or the whole key text.
 * Returns the revoked record, or undefined when there is no such key.
 */
export async function revokeApiKey(store: KeyStore, name: string): Promise<ApiKeyRecord | undefined> {
  const id = /^fs_(sk|pk)_([0-9A-Za-z]+)/.exec(name)?.[2] ?? name;
  return store.revokeApiKey(id, new Date().toISOString());
}
