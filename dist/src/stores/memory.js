import { compareSubmissions, matchesFilter } from "./query.js";
export function createMemoryStore() {
    const accountsByName = new Map();
    const submissionsByAccount = new Map();
    const keys = new Map();
    let closed = false;
    const submissionsOf = (accountId) => {
        if (closed)
            throw new Error("store is closed");
        let submissions = submissionsByAccount.get(accountId);
        if (!submissions)
            submissionsByAccount.set(accountId, (submissions = new Map()));
        return submissions;
    };
    // Callers get copies, so editing a returned object never edits the store.
    const copy = (value) => structuredClone(value);
    return {
        async insertSubmission(accountId, submission) {
            const submissions = submissionsOf(accountId);
            if (submissions.has(submission.submissionId)) {
                throw new Error(`submission ${submission.submissionId} already exists`);
            }
            submissions.set(submission.submissionId, copy(submission));
        },
        async getSubmission(accountId, submissionId) {
            const submission = submissionsOf(accountId).get(submissionId);
            return submission && copy(submission);
        },
        async listSubmissions(accountId, query) {
            const matching = [...submissionsOf(accountId).values()].filter((s) => matchesFilter(s, query));
            const direction = query.order === "asc" ? 1 : -1;
            matching.sort((a, b) => direction * compareSubmissions(a, b));
            return { items: matching.slice(query.offset, query.offset + query.limit).map(copy), total: matching.length };
        },
        async setSubmissionStatus(accountId, submissionId, status) {
            const submission = submissionsOf(accountId).get(submissionId);
            if (!submission)
                return false;
            submission.status = status;
            return true;
        },
        async deleteSubmission(accountId, submissionId) {
            return submissionsOf(accountId).delete(submissionId);
        },
        async ensureAccount(name) {
            let account = accountsByName.get(name);
            if (!account) {
                account = { id: crypto.randomUUID(), name, createdAt: new Date().toISOString() };
                accountsByName.set(name, account);
            }
            return { ...account };
        },
        async insertApiKey(key) {
            if (keys.has(key.id))
                throw new Error(`API key ${key.id} already exists`);
            keys.set(key.id, copy(key));
        },
        async findApiKey(keyId) {
            const key = keys.get(keyId);
            return key && copy(key);
        },
        async listApiKeys(filter = {}) {
            const accountNames = new Map([...accountsByName.values()].map((a) => [a.id, a.name]));
            return [...keys.values()]
                .map(({ hash: _hash, ...key }) => ({ ...copy(key), accountName: accountNames.get(key.accountId) ?? "" }))
                .filter((key) => filter.accountName === undefined || key.accountName === filter.accountName)
                .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
        },
        async revokeApiKey(keyId, revokedAt) {
            const key = keys.get(keyId);
            if (!key)
                return undefined;
            key.revokedAt ??= revokedAt;
            return copy(key);
        },
        async close() {
            closed = true;
            submissionsByAccount.clear();
        },
    };
}
