/**
 * The request and response schemas: the single source of truth for what the API accepts and
 * answers. The handler validates with these, the OpenAPI document (`src/openapi.ts`) is
 * generated from them, and the typed client takes its types from them. Their constraints are
 * the seed's (section 4.1, section 8) and the contract's; nothing else restates them.
 */
import { type } from "arktype";
import { characters } from "./code-points.ts";
import { afterBound, beforeBound, parseInstant } from "./instant.ts";
import { EVENT_TYPES, type EventType } from "./events.ts";
import { DEVICES, MAX_FIELD_LENGTHS, SUBMISSION_STATUSES, type SubmissionData } from "./submission.ts";

export const submissionStatus = type.enumerated(...SUBMISSION_STATUSES);
export const device = type.enumerated(...DEVICES);

const popupId = characters(1, MAX_FIELD_LENGTHS.popupId);
const domain = characters(1, MAX_FIELD_LENGTHS.domain);

/** Query integers are base-10 digits only: `1e1`, `10.0`, ` 5` and the empty string are refused. */
const digits = type(/^\d+$/).describe("a whole number written in digits");

/** An RFC 3339 instant (JSON Schema's `date-time`): seconds and a zone are required. */
const instant = type("string")
  .configure({ format: "date-time", description: "an RFC 3339 instant (ISO 8601 with seconds and a zone), such as 2025-07-12T10:30:00Z" })
  .narrow((text, ctx) => parseInstant(text) !== undefined || ctx.mustBe("an ISO 8601 instant such as 2025-07-12T10:30:00Z"))
  .pipe((text) => parseInstant(text)!);

/** The filters and order shared by the list and the export. */
const filterQuery = {
  "popupId?": popupId,
  "domain?": domain,
  "device?": characters(1, 128),
  "status?": submissionStatus,
  orderBy: type.enumerated("created_at", "created_at_desc").default("created_at_desc"),
  // Exclusive bounds, as whole epoch milliseconds that select exactly what the instant does.
  "createdAfter?": instant.pipe(afterBound),
  "createdBefore?": instant.pipe(beforeBound),
} as const;

export const listQuery = type({
  // `.integer` changes nothing at run time (digits are whole), but says so in the OpenAPI document.
  limit: digits.pipe(Number).to("1 <= number.integer <= 100").default("10"),
  offset: digits.pipe(Number).to(`0 <= number.integer <= ${Number.MAX_SAFE_INTEGER}`).default("0"),
  // Opaque: src/list-cursor.ts reads it, and says what is wrong with one it cannot use.
  "cursor?": "string",
  ...filterQuery,
});

export const EXPORT_FORMATS = ["csv", "ndjson"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const exportQuery = type({
  format: type.enumerated(...EXPORT_FORMATS).default("csv"),
  // A list answer's nextCursor: the export starts after that page (src/list-cursor.ts reads it).
  "cursor?": "string",
  ...filterQuery,
});

const eventType = type.enumerated(...EVENT_TYPES);
const EVENT_TYPE_PATTERN = EVENT_TYPES.map((name) => name.replaceAll(".", "\\.")).join("|");

/** A place in a log (the change log, a delivery log): an earlier answer's `nextCursor`. */
const logCursor = type(/^\d{1,15}$/)
  .configure({ description: "`nextCursor` of an earlier answer" })
  .describe("a cursor from an earlier answer's nextCursor")
  .pipe(Number);

export const eventsQuery = type({
  "after?": logCursor,
  limit: digits.pipe(Number).to("1 <= number.integer <= 1000").default("100"),
  "type?": type(new RegExp(`^(${EVENT_TYPE_PATTERN})(,(${EVENT_TYPE_PATTERN}))*$`))
    .configure({ description: `comma-separated event types: ${EVENT_TYPES.join(", ")}` })
    .describe(`comma-separated event types (${EVENT_TYPES.join(", ")})`)
    .pipe((text) => [...new Set(text.split(","))] as EventType[]),
  "popupId?": popupId,
});

/** The names a query schema reads from the URL; any other parameter is ignored. */
export function queryParameters(schema: typeof listQuery | typeof exportQuery | typeof eventsQuery | typeof deliveriesQuery): string[] {
  return schema.props.map((prop) => prop.key as string);
}

export const EXPORT_QUERY_PARAMETERS = queryParameters(exportQuery);
export const EVENTS_QUERY_PARAMETERS = queryParameters(eventsQuery);

/** A JSON object (not an array); its size and shape limits are checked by `checkSubmissionData`. */
const submissionData = type("Record<string, unknown>")
  .narrow((value, ctx) => !Array.isArray(value) || ctx.mustBe("an object"))
  .as<SubmissionData>();

export const createSubmissionBody = type({
  popupId,
  data: submissionData,
  "domain?": domain,
  "device?": device,
  "userAgent?": characters(0, MAX_FIELD_LENGTHS.userAgent),
  // The honeypot, which the popup script sends in JSON too: see create-request.ts.
  "_gotcha?": "string",
}).onUndeclaredKey("reject");

export const statusUpdateBody = type({ status: submissionStatus }).onUndeclaredKey("reject");

// ---- responses ---------------------------------------------------------------------------

export const submissionId = type(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  .configure({ format: "uuid", description: "a UUID in canonical lower-case text; made by the service (UUIDv7)" });

/** `createdAt` exactly as the service writes it: UTC, milliseconds, a trailing `Z`. */
const createdAt = type(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:[0-5]\d\.\d{3}Z$/)
  .configure({ format: "date-time", description: "ISO 8601 in UTC with milliseconds, such as 2025-07-12T10:30:00.000Z" })
  .narrow((text, ctx) => parseInstant(text) !== undefined || ctx.mustBe("a real date and time"));

/**
 * A submission as the API answers it, and as an import must give it. `domain` may be empty (a
 * create without one, from no page), and `userAgent` is the request's header when the body has
 * none, so neither has the create body's bounds.
 */
export const submission = type({
  submissionId,
  popupId,
  data: submissionData,
  domain: characters(0, MAX_FIELD_LENGTHS.domain),
  userAgent: "string",
  device,
  status: submissionStatus,
  createdAt,
}).onUndeclaredKey("reject");

export const submissionList = type({
  items: submission.array(),
  limit: "1 <= number.integer <= 100",
  offset: "number.integer >= 0",
  total: "number.integer >= 0",
  nextCursor: type("string | null").configure({ description: "pass as `cursor` (with the same filters and orderBy) for the next page; null on the last page" }),
});

export const statusUpdateResult = type({
  message: "'Submission status updated'",
  submissionId,
  status: submissionStatus,
});

export const deleteResult = type({ message: "'Submission deleted'", submissionId });

/** An event of the change log, in the Standard Webhooks payload form. */
export const changeEvent = type({
  id: type(/^evt_[0-9a-f]{32}$/).describe("an event id: evt_ and 32 hex digits"),
  type: eventType,
  timestamp: createdAt,
  // submission.created: the Submission (of one deleted since: {submissionId, popupId});
  // submission.status_changed: {submissionId, popupId, status, previousStatus};
  // submission.deleted: {submissionId, popupId, reason}.
  data: type({ submissionId, popupId, "[string]": "unknown" }),
});

export const eventList = type({
  items: changeEvent.array(),
  nextCursor: type(/^\d{1,15}$/).describe("where the next read starts: pass it as `after`"),
});

export const errorBody = type({ message: "string" });

export type CreateSubmissionBody = typeof createSubmissionBody.infer;

// ---- privacy ------------------------------------------------------------------------------

export const erasureBody = type({
  field: characters(1, 256),
  value: characters(1, 4096),
  "dryRun?": "boolean",
}).onUndeclaredKey("reject");

export const erasureReceipt = type({
  erasureId: submissionId.or("null"),
  field: "string",
  matched: "number.integer >= 0",
  deleted: "number.integer >= 0",
  submissionIds: submissionId.array(),
  requestedAt: createdAt,
  completedAt: createdAt,
  dryRun: "boolean",
});

/** The most retention rules an account may have. */
export const MAX_RETENTION_RULES = 20;

const retentionRule = type({
  "popupId?": popupId,
  "status?": submissionStatus,
  olderThanDays: "1 <= number.integer <= 36500",
}).onUndeclaredKey("reject");

export const retentionRules = type({
  rules: retentionRule.array().atMostLength(MAX_RETENTION_RULES),
}).onUndeclaredKey("reject");

export const retentionPreview = type({
  asOf: createdAt,
  rules: type({
    "popupId?": popupId,
    "status?": submissionStatus,
    olderThanDays: "number.integer",
    olderThan: createdAt,
    matched: "number.integer >= 0",
  }).array(),
});

export const healthOk = type({ status: "'ok'" });
export const healthUnavailable = type({ status: "'unavailable'", message: "string" });

// ---- webhooks -----------------------------------------------------------------------------

const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Its shape only: which URLs a deployment delivers to is `addWebhook`'s check (webhook-endpoints.ts). */
const webhookUrl = characters(1, MAX_WEBHOOK_URL_LENGTH)
  .and(type(/^[Hh][Tt][Tt][Pp][Ss]?:\/\//).describe("an absolute http or https URL such as https://example.com/hooks"))
  .configure({ format: "uri", description: `an absolute http or https URL, at most ${MAX_WEBHOOK_URL_LENGTH} characters` })
  .narrow((text, ctx) => isHttpUrl(text) || ctx.mustBe("an absolute http or https URL such as https://example.com/hooks"));

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "https:" || protocol === "http:";
}

const webhookTypes = eventType.array().atLeastLength(1).describe(`a non-empty list of event types (${EVENT_TYPES.join(", ")})`);
const webhookDescription = characters(0, 512);

const webhookId = type(/^wh_[0-9a-f]{32}$/).describe("a webhook id: wh_ and 32 hex digits");

export const createWebhookBody = type({
  url: webhookUrl,
  "types?": webhookTypes,
  "popupId?": popupId,
  "description?": webhookDescription,
}).onUndeclaredKey("reject");

export const updateWebhookBody = type({
  "url?": webhookUrl,
  "types?": webhookTypes.or("null"),
  "popupId?": popupId.or("null"),
  "description?": webhookDescription.or("null"),
  "enabled?": "boolean",
}).onUndeclaredKey("reject");

/** An endpoint as the API shows it: never its secrets, but on creation and rotation. */
export const webhook = type({
  webhookId,
  url: "string",
  types: eventType.array().or("null"),
  popupId: "string | null",
  description: "string | null",
  createdAt,
  disabledAt: createdAt.or("null"),
  previousSecretExpiresAt: createdAt.or("null"),
});

export const webhookWithSecret = webhook.and({
  secret: type(/^whsec_[A-Za-z0-9+/]+={0,2}$/).describe("a signing secret: whsec_ and base64"),
});

export const webhookList = type({ items: webhook.array() });

export const webhookDeleted = type({ message: "'Webhook deleted'", webhookId });

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;

export const deliveriesQuery = type({
  "status?": type.enumerated(...DELIVERY_STATUSES),
  "cursor?": logCursor,
  limit: digits.pipe(Number).to("1 <= number.integer <= 100").default("20"),
});

export const DELIVERIES_QUERY_PARAMETERS = queryParameters(deliveriesQuery);

export const delivery = type({
  eventId: "string",
  eventType,
  status: type.enumerated(...DELIVERY_STATUSES),
  attempts: "number.integer >= 0",
  lastAttemptAt: createdAt.or("null"),
  nextAttemptAt: createdAt.or("null"),
  lastStatusCode: "number.integer | null",
  lastError: "string | null",
  lastDurationMs: "number >= 0 | null",
});

export const deliveryList = type({
  items: delivery.array(),
  nextCursor: type(/^\d{1,15}$/).or("null").describe("where the next page starts: pass it as `cursor`; null on the last page"),
});

export const retryResult = type({ message: "'Delivery queued'", eventId: "string" });

export const replayBody = type({ since: instant }).onUndeclaredKey("reject");

export const replayResult = type({ replayed: "number.integer >= 0" });

export type CreateWebhookBody = typeof createWebhookBody.infer;
export type UpdateWebhookBody = typeof updateWebhookBody.infer;
export type WebhookBody = typeof webhook.infer;
export type WebhookWithSecretBody = typeof webhookWithSecret.infer;
export type DeliveryListBody = typeof deliveryList.infer;
