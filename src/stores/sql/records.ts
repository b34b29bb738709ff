/**
 * Rows of the `api_keys` and `erasure_receipts` tables as records: the SQLite and the PostgreSQL
 * schemas give these tables the same columns, so both stores read them here.
 */
import type { ApiKeyRecord, ErasureReceipt } from "../../store.ts";

export function toApiKey(row: Record<string, unknown>): ApiKeyRecord {
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

export function toErasureReceipt(row: Record<string, unknown>): ErasureReceipt {
  return {
    erasureId: String(row.id),
    field: String(row.field),
    valueHash: String(row.value_hash),
    matched: Number(row.matched),
    deleted: Number(row.deleted),
    submissionIds: JSON.parse(String(row.submission_ids)) as string[],
    requestedAt: String(row.requested_at),
    completedAt: String(row.completed_at),
  };
}
