import { listStatements, SUBMISSION_COLUMNS } from "./list-query.js";
import { migrate } from "./migrate.js";
/**
 * A store over `driver`, its schema brought up to date first. `close` runs when the store is
 * closed (a driver that owns its connection closes it there).
 */
export async function createSqlStore(driver, close = () => { }) {
    await migrate(driver);
    return sqlStore(driver, close);
}
function sqlStore(driver, close) {
    return {
        async insertSubmission(accountId, s) {
            await driver.execute({
                sql: `INSERT INTO submissions (account_id, ${SUBMISSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
                args: [
                    accountId, s.submissionId, s.popupId, s.domain, s.device, s.userAgent, s.status,
                    Date.parse(s.createdAt), JSON.stringify(s.data),
                ],
            });
        },
        async getSubmission(accountId, submissionId) {
            const { rows } = await driver.execute({
                sql: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE account_id = ? AND id = ?`,
                args: [accountId, submissionId],
            });
            return rows[0] && toSubmission(rows[0]);
        },
        async listSubmissions(accountId, query) {
            const { page, count } = listStatements(accountId, query);
            // One read transaction, so the page and the total come from the same snapshot.
            const [rows, total] = await driver.batch([page, count], "read");
            return { items: rows.rows.map(toSubmission), total: Number(total.rows[0].total) };
        },
        async setSubmissionStatus(accountId, submissionId, status) {
            const result = await driver.execute({
                sql: "UPDATE submissions SET status = ? WHERE account_id = ? AND id = ?",
                args: [status, accountId, submissionId],
            });
            return result.rowsAffected > 0;
        },
        async deleteSubmission(accountId, submissionId) {
            const result = await driver.execute({
                sql: "DELETE FROM submissions WHERE account_id = ? AND id = ?",
                args: [accountId, submissionId],
            });
            return result.rowsAffected > 0;
        },
        async ensureAccount(name) {
            const [, selected] = await driver.batch([
                {
                    sql: "INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
                    args: [crypto.randomUUID(), name, new Date().toISOString()],
                },
                { sql: "SELECT id, name, created_at FROM accounts WHERE name = ?", args: [name] },
            ], "write");
            const row = selected.rows[0];
            return { id: String(row.id), name: String(row.name), createdAt: String(row.created_at) };
        },
        async insertApiKey(key) {
            await driver.execute({
                sql: `INSERT INTO api_keys (id, account_id, kind, hash, domains, created_at, revoked_at)
              VALUES (?, ?, ?, ?, ?, ?, ?)`,
                args: [key.id, key.accountId, key.kind, key.hash, JSON.stringify(key.domains), key.createdAt, key.revokedAt],
            });
        },
        async findApiKey(keyId) {
            const { rows } = await driver.execute({ sql: "SELECT * FROM api_keys WHERE id = ?", args: [keyId] });
            return rows[0] && toApiKey(rows[0]);
        },
        async listApiKeys(filter = {}) {
            const { rows } = await driver.execute({
                sql: `SELECT api_keys.*, accounts.name AS account_name FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id
              ${filter.accountName === undefined ? "" : "WHERE accounts.name = ?"}
              ORDER BY api_keys.created_at, api_keys.id`,
                args: filter.accountName === undefined ? [] : [filter.accountName],
            });
            return rows.map((row) => {
                const { hash: _hash, ...key } = toApiKey(row);
                return { ...key, accountName: String(row.account_name) };
            });
        },
        async revokeApiKey(keyId, revokedAt) {
            const { rows } = await driver.execute({
                sql: "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING *",
                args: [revokedAt, keyId],
            });
            return rows[0] && toApiKey(rows[0]);
        },
        async close() {
            close();
        },
    };
}
function toSubmission(row) {
    return {
        submissionId: String(row.id),
        popupId: String(row.popup_id),
        data: JSON.parse(String(row.data)),
        domain: String(row.domain),
        userAgent: String(row.user_agent),
        device: String(row.device),
        status: String(row.status),
        createdAt: new Date(Number(row.created_at)).toISOString(),
    };
}
function toApiKey(row) {
    return {
        id: String(row.id),
        accountId: String(row.account_id),
        kind: String(row.kind) === "publishable" ? "publishable" : "secret",
        hash: String(row.hash),
        domains: JSON.parse(String(row.domains)),
        createdAt: String(row.created_at),
        revokedAt: row.revoked_at === null ? null : String(row.revoked_at),
    };
}
