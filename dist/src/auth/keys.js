import { generateApiKey } from "./api-key.js";
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const HOST = /^(?=.{1,253}(:|$))[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;
export async function createApiKey(store, options) {
    const kind = options.kind ?? "secret";
    if (!ACCOUNT_NAME.test(options.account)) {
        throw new RangeError("account name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
    }
    const domains = (options.domains ?? []).map((domain) => domain.trim().toLowerCase());
    for (const domain of domains) {
        if (!HOST.test(domain))
            throw new RangeError(`domain "${domain}" is not a host name such as example.com`);
    }
    if (kind === "secret" && domains.length > 0) {
        throw new RangeError("domains apply to publishable keys only");
    }
    if (kind === "publishable" && domains.length === 0) {
        throw new RangeError("a publishable key needs at least one domain it may be used from");
    }
    const account = await store.ensureAccount(options.account);
    const generated = await generateApiKey(kind);
    const record = {
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
 * Revokes a key named by its prefix (`fs_sk_<id>`), its id, or the whole key text.
 * Returns the revoked record, or undefined when there is no such key.
 */
export async function revokeApiKey(store, name) {
    const id = /^fs_(sk|pk)_([0-9A-Za-z]+)/.exec(name)?.[2] ?? name;
    return store.revokeApiKey(id, new Date().toISOString());
}
