/**
 * Rows of the `api_keys`, `erasure_receipts`, `webhooks` and `webhook_deliveries` tables as
 * records, and an endpoint's changeable fields as columns: the SQLite and the PostgreSQL schemas
 * give these tables the same columns, so the stores share them here.
 */
import type { EventType } from "../../events.ts";
import { formatInstant } from "../../instant.ts";
import type { ApiKeyRecord, Delivery, DeliveryStatus, ErasureReceipt, WebhookChange, WebhookRecord } from "../../store.ts";

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

/** Each changeable field of an endpoint, its column and how it is written. */
export const WEBHOOK_CHANGES: {
  [K in keyof Required<WebhookChange>]: { column: string; write: (value: WebhookChange[K]) => string | number | null };
} = {
  url: { column: "url", write: (url) => url! },
  types: { column: "types", write: (types) => (types ? JSON.stringify(types) : null) },
  popupId: { column: "popup_id", write: (popupId) => popupId ?? null },
  description: { column: "description", write: (description) => description ?? null },
  disabledAt: { column: "disabled_at", write: (disabledAt) => disabledAt ?? null },
  secrets: { column: "secrets", write: (secrets) => JSON.stringify(secrets) },
  previousSecretExpiresAt: { column: "previous_secret_expires_at", write: (expiresAt) => expiresAt ?? null },
  failingSince: { column: "failing_since", write: (since) => since ?? null },
};

export function toWebhook(row: Record<string, unknown>): WebhookRecord {
  return {
    webhookId: String(row.id),
    url: String(row.url),
    types: row.types === null ? null : (JSON.parse(String(row.types)) as EventType[]),
    popupId: nullableText(row.popup_id),
    description: nullableText(row.description),
    createdAt: String(row.created_at),
    disabledAt: nullableText(row.disabled_at),
    secrets: JSON.parse(String(row.secrets)) as string[],
    previousSecretExpiresAt: nullableNumber(row.previous_secret_expires_at),
    failingSince: nullableNumber(row.failing_since),
  };
}

export function toDelivery(row: Record<string, unknown>): Delivery {
  const nextAttemptAt = nullableNumber(row.next_attempt_at);
  const lastAttemptAt = nullableNumber(row.last_attempt_at);
  return {
    eventId: String(row.event_id),
    eventType: String(row.event_type) as EventType,
    position: Number(row.position),
    status: String(row.status) as DeliveryStatus,
    attempts: Number(row.attempts),
    lastAttemptAt: lastAttemptAt === null ? null : formatInstant(lastAttemptAt),
    nextAttemptAt: nextAttemptAt === null ? null : formatInstant(nextAttemptAt),
    lastStatusCode: nullableNumber(row.last_status_code),
    lastError: nullableText(row.last_error),
    lastDurationMs: nullableNumber(row.last_duration_ms),
  };
}

const nullableText = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
export const nullableNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
