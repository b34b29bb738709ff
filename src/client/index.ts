/**
 * `formsink/client`: a small typed client for the formsink HTTP API, on nothing but `fetch`,
 * so it runs in browsers, Node, Bun, Deno and Workers alike, and ships none of the server's code.
 *
 *   const formsink = createClient({ baseUrl: "https://forms.example.com", apiKey: process.env.FORMSINK_KEY });
 *   for await (const submission of formsink.export({ status: "pending" })) console.log(submission.data.email);
 *
 * Its types are written out here (JSR wants explicit types in a public API, and the client's
 * users should not need arktype's), and `test/client/types.ts` checks at compile time that each
 * is exactly the type the server's schema infers (`src/schemas.ts`), so they cannot drift.
 */
import type { ChangeEvent, EventType, StatusChange, Tombstone } from "../events.ts";
import type { DeletionReason, Device, JsonValue, Submission, SubmissionData, SubmissionStatus } from "../submission.ts";

export type { ChangeEvent, DeletionReason, Device, EventType, JsonValue, StatusChange, Submission, SubmissionData, SubmissionStatus, Tombstone };

/** A page of the change log: the schema `eventList`. */
export interface EventList {
  items: ChangeEvent[];
  /** Pass it as `after` to read on from here. */
  nextCursor: string;
}

/** The query of `GET /api/events` (the schema `eventsQuery`). */
export interface EventsOptions {
  /** `nextCursor` of an earlier page; without it, from the oldest event kept. */
  after?: string;
  /** 1..1000, default 100. */
  limit?: number;
  type?: readonly EventType[];
  popupId?: string;
}

/** A list page: the schema `submissionList`. */
export interface SubmissionList {
  items: Submission[];
  limit: number;
  offset: number;
  /** Every match, whatever the limit and offset. */
  total: number;
  /** Pass as `cursor` (with the same filters and orderBy) for the next page; null on the last page. */
  nextCursor: string | null;
}

/** The schema `statusUpdateResult`. */
export interface StatusUpdateResult {
  message: "Submission status updated";
  submissionId: string;
  status: SubmissionStatus;
}

/** The schema `deleteResult`. */
export interface DeleteResult {
  message: "Submission deleted";
  submissionId: string;
}

/** A create's body: the schema `createSubmissionBody`. */
export interface CreateSubmission {
  popupId: string;
  data: SubmissionData;
  domain?: string;
  device?: Device;
  userAgent?: string;
}

/** An erasure's body: the schema `erasureBody`. */
export interface Erasure {
  field: string;
  value: string;
  dryRun?: boolean;
}

/** What an erasure answers and its receipt reads back: the schema `erasureReceipt`. */
export interface ErasureReceipt {
  /** Null for a dry run, which keeps no receipt. */
  erasureId: string | null;
  field: string;
  matched: number;
  deleted: number;
  submissionIds: string[];
  requestedAt: string;
  completedAt: string;
  dryRun: boolean;
}

/** One retention rule: delete the submissions older than `olderThanDays` (of this popup, of this status). */
export interface RetentionRule {
  popupId?: string;
  status?: SubmissionStatus;
  olderThanDays: number;
}

/** The schema `retentionRules`. */
export interface RetentionRules {
  rules: RetentionRule[];
}

/** The schema `retentionPreview`: per rule, how many submissions it would delete now. */
export interface RetentionPreview {
  asOf: string;
  rules: (RetentionRule & { olderThan: string; matched: number })[];
}

/** An instant as ISO 8601 text (`2025-07-12T10:30:00Z`) or a Date. */
export type Instant = string | Date;

/** A webhook endpoint as the API shows it (never its secrets): the schema `webhook`. */
export interface Webhook {
  webhookId: string;
  url: string;
  /** The event types sent; null for every type. */
  types: EventType[] | null;
  /** Only this popup's events; null for every popup. */
  popupId: string | null;
  description: string | null;
  createdAt: string;
  /** Since when no deliveries are made (by a user, a 410 answer or days of failures); null while enabled. */
  disabledAt: string | null;
  /** Until when the secret before the last rotation still signs beside the new one; null when it does not. */
  previousSecretExpiresAt: string | null;
}

/** An endpoint just created or rotated, with its signing secret (`whsec_...`), shown this once: the schema `webhookWithSecret`. */
export interface WebhookWithSecret extends Webhook {
  secret: string;
}

/** A create's body: the schema `createWebhookBody`. */
export interface CreateWebhook {
  url: string;
  types?: EventType[];
  popupId?: string;
  description?: string;
}

/** A change: the fields given change, `null` clears a filter or the description (the schema `updateWebhookBody`). */
export interface UpdateWebhook {
  url?: string;
  types?: EventType[] | null;
  popupId?: string | null;
  description?: string | null;
  enabled?: boolean;
}

/** The schema `webhookList`. */
export interface WebhookList {
  items: Webhook[];
}

/** The schema `webhookDeleted`. */
export interface WebhookDeleted {
  message: "Webhook deleted";
  webhookId: string;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

/** One event sent, or to be sent, to an endpoint: the schema `delivery`. */
export interface Delivery {
  eventId: string;
  eventType: EventType;
  status: DeliveryStatus;
  attempts: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
}

/** A page of the delivery log: the schema `deliveryList`. */
export interface DeliveryList {
  items: Delivery[];
  /** Pass it as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

/** The query of the delivery log (the schema `deliveriesQuery`). */
export interface DeliveriesOptions {
  status?: DeliveryStatus;
  cursor?: string;
  /** 1..100, default 20. */
  limit?: number;
}

/** The schema `retryResult`. */
export interface RetryResult {
  message: "Delivery queued";
  eventId: string;
}

/** The schema `replayResult`: how many deliveries were queued. */
export interface ReplayResult {
  replayed: number;
}

/** The filters and order of a list or an export: the schema `exportQuery` without `format`, instants also as Dates. */
export interface SubmissionFilters {
  popupId?: string;
  domain?: string;
  device?: string;
  status?: SubmissionStatus;
  /** Default `created_at_desc`, newest first. */
  orderBy?: "created_at" | "created_at_desc";
  /** Exclusive. */
  createdAfter?: Instant;
  /** Exclusive. */
  createdBefore?: Instant;
}

/** An export's query: the filters, and a list page's `nextCursor` (same filters and order) to export what follows that page. */
export interface ExportOptions extends SubmissionFilters {
  cursor?: string;
}

/**
 * A list page's query: the filters plus `limit` (1..100, default 10) and either `offset` or
 * `cursor` (an earlier page's `nextCursor`, with the same filters): the schema `listQuery`.
 */
export interface ListOptions extends SubmissionFilters {
  limit?: number;
  offset?: number;
  cursor?: string;
}

export interface RequestOptions {
  /** Aborts the request (and, for iterators, the rest of the walk). */
  signal?: AbortSignal;
}

/** The part of `fetch` the client uses; any runtime's `fetch` fits it. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Where the API is mounted: an origin, plus the handler's base path if it has one (`https://example.com/forms`). */
  baseUrl: string | URL;
  /** A secret key (`fs_sk_...`), sent in `x-api-key`. */
  apiKey: string;
  /** Default: the global `fetch`. */
  fetch?: Fetch;
}

/** Any answer that is not a success: the status, and the message the API gave. */
export class FormsinkError extends Error {
  readonly status: number;
  readonly headers: Headers;

  constructor(status: number, message: string, headers: Headers = new Headers()) {
    super(message);
    this.name = "FormsinkError";
    this.status = status;
    this.headers = headers;
  }
}

export interface FormsinkClient {
  /** One page: `{items, limit, offset, total}`. */
  list(options?: ListOptions, request?: RequestOptions): Promise<SubmissionList>;
  get(submissionId: string, request?: RequestOptions): Promise<Submission>;
  /** `idempotencyKey` is sent as the `Idempotency-Key` header, for servers that honour it. */
  create(body: CreateSubmission, request?: RequestOptions & { idempotencyKey?: string }): Promise<Submission>;
  updateStatus(submissionId: string, status: SubmissionStatus, request?: RequestOptions): Promise<StatusUpdateResult>;
  delete(submissionId: string, request?: RequestOptions): Promise<DeleteResult>;
  /**
   * Every matching submission (with `cursor`, every one after that list page), streamed by the
   * export endpoint (NDJSON) and handed out one at a time. Stopping early (`break`) closes the
   * connection, which stops the server's query.
   */
  export(filters?: ExportOptions, request?: RequestOptions): AsyncGenerator<Submission, void, undefined>;
  /**
   * Every matching submission through the list endpoint, page after page, for servers or
   * keys where the export is not an option. Each page follows the last one's `nextCursor`, so
   * submissions created or deleted meanwhile neither repeat nor shift anything.
   */
  listAll(filters?: SubmissionFilters, request?: RequestOptions & { pageSize?: number }): AsyncGenerator<Submission, void, undefined>;
  /** Deletes every submission whose `data[field]` is the value (or with `dryRun`, counts them) and returns the receipt. */
  erase(erasure: Erasure, request?: RequestOptions): Promise<ErasureReceipt>;
  getErasure(erasureId: string, request?: RequestOptions): Promise<ErasureReceipt>;
  getRetention(request?: RequestOptions): Promise<RetentionRules>;
  /** Replaces the account's retention rules; `[]` removes them. */
  setRetention(rules: RetentionRule[], request?: RequestOptions): Promise<RetentionRules>;
  previewRetention(request?: RequestOptions): Promise<RetentionPreview>;
  /** One page of the change log. A cursor outside the events kept (older, or ahead of the log) is a `FormsinkError` with status 410. */
  events(options?: EventsOptions, request?: RequestOptions): Promise<EventList>;
  /** Subscribes an endpoint; the answer carries its signing secret, which is never shown again. */
  createWebhook(body: CreateWebhook, request?: RequestOptions): Promise<WebhookWithSecret>;
  listWebhooks(request?: RequestOptions): Promise<WebhookList>;
  getWebhook(webhookId: string, request?: RequestOptions): Promise<Webhook>;
  updateWebhook(webhookId: string, change: UpdateWebhook, request?: RequestOptions): Promise<Webhook>;
  deleteWebhook(webhookId: string, request?: RequestOptions): Promise<WebhookDeleted>;
  /** A new signing secret, shown this once; the previous one keeps signing beside it for 24 hours. */
  rotateWebhookSecret(webhookId: string, request?: RequestOptions): Promise<WebhookWithSecret>;
  /** One page of the endpoint's delivery log, newest event first. */
  webhookDeliveries(webhookId: string, options?: DeliveriesOptions, request?: RequestOptions): Promise<DeliveryList>;
  /** Sends the endpoint this event again, now. */
  retryWebhookDelivery(webhookId: string, eventId: string, request?: RequestOptions): Promise<RetryResult>;
  /** Sends the endpoint every event kept since `since` again. */
  replayWebhook(webhookId: string, since: Instant, request?: RequestOptions): Promise<ReplayResult>;
}

export function createClient(options: ClientOptions): FormsinkClient {
  const base = new URL(options.baseUrl);
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  // Called as a plain function: some runtimes refuse `fetch` called on another object.
  const fetcher: Fetch = options.fetch ?? ((input, init) => fetch(input, init));

  const send = async (method: string, path: string, init: { query?: object; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> => {
    const url = new URL(path, base);
    for (const [name, value] of Object.entries(init.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value instanceof Date ? value.toISOString() : String(value));
    }
    const headers: Record<string, string> = { "x-api-key": options.apiKey, accept: "application/json", ...init.headers };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const response = await fetcher(url, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.signal,
    });
    if (!response.ok) throw await errorOf(response);
    return response;
  };
  const json = async <T>(method: string, path: string, init?: Parameters<typeof send>[2]): Promise<T> => {
    const response = await send(method, path, init);
    try {
      return (await response.json()) as T;
    } catch {
      throw new FormsinkError(response.status, `the answer to ${method} ${path} is not JSON`, response.headers);
    }
  };
  const item = (submissionId: string) => `api/submission/${encodeURIComponent(submissionId)}`;
  const hook = (webhookId: string) => `api/webhooks/${encodeURIComponent(webhookId)}`;

  const client: FormsinkClient = {
    list: (query = {}, { signal } = {}) => json("GET", "api/submission", { query, signal }),
    get: (submissionId, { signal } = {}) => json("GET", item(submissionId), { signal }),
    create: (body, { signal, idempotencyKey } = {}) =>
      json("POST", "api/submission", { body, signal, headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : {} }),
    updateStatus: (submissionId, status, { signal } = {}) => json("PATCH", item(submissionId), { body: { status }, signal }),
    delete: (submissionId, { signal } = {}) => json("DELETE", item(submissionId), { signal }),
    erase: (body, { signal } = {}) => json("POST", "api/erasure", { body, signal }),
    getErasure: (erasureId, { signal } = {}) => json("GET", `api/erasure/${encodeURIComponent(erasureId)}`, { signal }),
    getRetention: ({ signal } = {}) => json("GET", "api/retention", { signal }),
    setRetention: (rules, { signal } = {}) => json("PUT", "api/retention", { body: { rules }, signal }),
    previewRetention: ({ signal } = {}) => json("GET", "api/retention/preview", { signal }),
    events: ({ type, ...query } = {}, { signal } = {}) =>
      json("GET", "api/events", { query: { ...query, type: type?.join(",") }, signal }),
    createWebhook: (body, { signal } = {}) => json("POST", "api/webhooks", { body, signal }),
    listWebhooks: ({ signal } = {}) => json("GET", "api/webhooks", { signal }),
    getWebhook: (webhookId, { signal } = {}) => json("GET", hook(webhookId), { signal }),
    updateWebhook: (webhookId, change, { signal } = {}) => json("PATCH", hook(webhookId), { body: change, signal }),
    deleteWebhook: (webhookId, { signal } = {}) => json("DELETE", hook(webhookId), { signal }),
    rotateWebhookSecret: (webhookId, { signal } = {}) => json("POST", `${hook(webhookId)}/rotate-secret`, { signal }),
    webhookDeliveries: (webhookId, query = {}, { signal } = {}) => json("GET", `${hook(webhookId)}/deliveries`, { query, signal }),
    retryWebhookDelivery: (webhookId, eventId, { signal } = {}) =>
      json("POST", `${hook(webhookId)}/deliveries/${encodeURIComponent(eventId)}/retry`, { signal }),
    replayWebhook: (webhookId, since, { signal } = {}) =>
      json("POST", `${hook(webhookId)}/replay`, { body: { since: since instanceof Date ? since.toISOString() : since }, signal }),

    async *export(filters = {}, { signal } = {}) {
      const response = await send("GET", "api/submission/export", { query: { ...filters, format: "ndjson" }, signal, headers: { accept: "application/x-ndjson" } });
      for await (const line of lines(response.body)) yield JSON.parse(line) as Submission;
    },

    async *listAll(filters = {}, { signal, pageSize = 100 } = {}) {
      let cursor: string | undefined;
      do {
        const page: SubmissionList = await client.list({ ...filters, limit: pageSize, ...(cursor === undefined ? {} : { cursor }) }, { signal });
        yield* page.items;
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
    },
  };
  return client;
}

async function errorOf(response: Response): Promise<FormsinkError> {
  const text = await response.text().catch(() => "");
  let message = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === "string") message = body.message;
  } catch {
    // not the API's error shape (a proxy's page, say): the status line says what there is
  }
  return new FormsinkError(response.status, message, response.headers);
}

/** The non-empty lines of a UTF-8 body; the body is cancelled if the reader stops early. */
async function* lines(body: ReadableStream<Uint8Array> | null): AsyncGenerator<string> {
  if (!body) return;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let rest = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      rest += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const parts = rest.split("\n");
      rest = done ? "" : parts.pop()!;
      for (const part of parts) if (part.trim() !== "") yield part;
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
