/**
 * The default store: libSQL through `@libsql/client`. The same code serves an embedded file
 * (`file:formsink.db`), `:memory:` and a remote libSQL server such as Turso
 * (`libsql://...` with an auth token).
 */
import { type Client, createClient, type InStatement, type Row } from "@libsql/client";
import type {
  Account, ApiKeyListing, ApiKeyRecord, SubmissionPage, SubmissionQuery, SubmissionStore,
} from "../../store.ts";
import type { Device, Submission, SubmissionData, SubmissionStatus } from "../../submission.ts";
import { listStatements, SUBMISSION_COLUMNS } from "./list-query.ts";
import { migrate } from "./migrate.ts";

export interface LibsqlStoreOptions {
  /** `file:path.db` (default `file:formsink.db`), `:memory:`, `libsql://...`, `https://...`. */
  url?: string;
  /** For remote databases (Turso). */
  authToken?: string;
  /** Use this client instead of opening one; the store then leaves closing it to you. */
  client?: Client;
}

export const DEFAULT_DATABASE_URL = "file:formsink.db";

/** Opens (and migrates) a libSQL database as a submission store. */
export async function createLibsqlStore(options: LibsqlStoreOptions = {}): Promise<SubmissionStore> {
  const ownsClient = options.client === undefined;
  const client =
    options.client ??
    createClient({
      url: options.url ?? DEFAULT_DATABASE_URL,
      authToken: options.authToken,
      // Wait for another process's write lock (e.g. two servers migrating one file) instead of
      // failing at once with SQLITE_BUSY.
      timeout: 5000,
    });
  try {
    if (client.protocol === "file" && !isInMemory(options.url)) {
      // WAL lets readers run while a write commits; the mode is stored in the file.
      await client.execute("PRAGMA journal_mode = WAL");
    }
    await migrate(client);
  } catch (error) {
    if (ownsClient) client.close();
    throw error;
  }
  return libsqlStore(client, ownsClient);
}

/** True for a libSQL URL of a database that lives only in this process. */
export function isInMemory(url: string | undefined): boolean {
  return url !== undefined && /^(file:)?:memory:/.test(url);
}

function libsqlStore(client: Client, ownsClient: boolean): SubmissionStore {
  return {
    async insertSubmission(accountId, s) {
      await client.execute({
        sql: `INSERT INTO submissions (account_id, ${SUBMISSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        args: [
          accountId, s.submissionId, s.popupId, s.domain, s.device, s.userAgent, s.status,
          Date.parse(s.createdAt), JSON.stringify(s.data),
        ],
      });
    },
    async getSubmission(accountId, submissionId) {
      const { rows } = await client.execute({
        sql: `SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE account_id = ? AND id = ?`,
        args: [accountId, submissionId],
      });
      return rows[0] && toSubmission(rows[0]);
    },
    async listSubmissions(accountId, query: SubmissionQuery): Promise<SubmissionPage> {
      const { page, count } = listStatements(accountId, query);
      // One read transaction, so the page and the total come from the same snapshot.
      const [rows, total] = await client.batch([page, count], "read");
      return { items: rows!.rows.map(toSubmission), total: Number(total!.rows[0]!.total) };
    },
    async setSubmissionStatus(accountId, submissionId, status: SubmissionStatus) {
      const result = await client.execute({
        sql: "UPDATE submissions SET status = ? WHERE account_id = ? AND id = ?",
        args: [status, accountId, submissionId],
      });
      return result.rowsAffected > 0;
    },
    async deleteSubmission(accountId, submissionId) {
      const result = await client.execute({
        sql: "DELETE FROM submissions WHERE account_id = ? AND id = ?",
        args: [accountId, submissionId],
      });
      return result.rowsAffected > 0;
    },

    async ensureAccount(name): Promise<Account> {
      const [, selected] = await client.batch(
        [
          {
            sql: "INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
            args: [crypto.randomUUID(), name, new Date().toISOString()],
          },
          { sql: "SELECT id, name, created_at FROM accounts WHERE name = ?", args: [name] },
        ],
        "write",
      );
      const row = selected!.rows[0]!;
      return { id: String(row.id), name: String(row.name), createdAt: String(row.created_at) };
    },
    async insertApiKey(key) {
      await client.execute({
        sql: `INSERT INTO api_keys (id, account_id, kind, hash, domains, created_at, revoked_at)
              VALUES (?, ?, ?, ?, ?, ?, ?)`,
        args: [key.id, key.accountId, key.kind, key.hash, JSON.stringify(key.domains), key.createdAt, key.revokedAt],
      });
    },
    async findApiKey(keyId) {
      const { rows } = await client.execute({ sql: "SELECT * FROM api_keys WHERE id = ?", args: [keyId] });
      return rows[0] && toApiKey(rows[0]);
    },
    async listApiKeys(filter = {}): Promise<ApiKeyListing[]> {
      const statement: InStatement = {
        sql: `SELECT api_keys.*, accounts.name AS account_name FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id
              ${filter.accountName === undefined ? "" : "WHERE accounts.name = ?"}
              ORDER BY api_keys.created_at, api_keys.id`,
        args: filter.accountName === undefined ? [] : [filter.accountName],
      };
      const { rows } = await client.execute(statement);
      return rows.map((row) => {
        const { hash: _hash, ...key } = toApiKey(row);
        return { ...key, accountName: String(row.account_name) };
      });
    },
    async revokeApiKey(keyId, revokedAt) {
      const { rows } = await client.execute({
        sql: "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING *",
        args: [revokedAt, keyId],
      });
      return rows[0] && toApiKey(rows[0]);
    },

    async close() {
      if (ownsClient) client.close();
    },
  };
}

function toSubmission(row: Row): Submission {
  return {
    submissionId: String(row.id),
    popupId: String(row.popup_id),
    data: JSON.parse(String(row.data)) as SubmissionData,
    domain: String(row.domain),
    userAgent: String(row.user_agent),
    device: String(row.device) as Device,
    status: String(row.status) as SubmissionStatus,
    createdAt: new Date(Number(row.created_at)).toISOString(),
  };
}

function toApiKey(row: Row): ApiKeyRecord {
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    kind: String(row.kind) === "publishable" ? "publishable" : "secret",
    hash: String(row.hash),
    domains: JSON.parse(String(row.domains)) as string[],
    createdAt: String(row.created_at),
    revokedAt: row.revoked_at === null ? null : String(row.revoked_at),
  };
}
