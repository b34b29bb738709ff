/**
 * Compile-time checks of the client's types, run by `npm run typecheck`: each type the client
 * writes out must be exactly what the server's schema infers, and each `@ts-expect-error` fails
 * the typecheck if the line below it stops being an error. Nothing here runs.
 */
import {
  createClient, type CreateSubmission, type CreateWebhook, type DeleteResult, type DeliveriesOptions, type Delivery, type DeliveryList, type Erasure,
  type ErasureReceipt, type EventsOptions, type ExportOptions, type ListOptions, type ReplayResult, type RetentionPreview, type RetentionRules, type RetryResult, type StatusUpdateResult,
  type Submission, type SubmissionList, type UpdateWebhook, type Webhook, type WebhookDeleted, type WebhookList,
  type WebhookWithSecret,
} from "../../src/client/index.ts";
import type {
  createSubmissionBody, createWebhookBody, deleteResult, deliveriesQuery, delivery, deliveryList, erasureBody, erasureReceipt, eventsQuery, exportQuery, listQuery,
  replayResult, retentionPreview, retentionRules, retryResult, statusUpdateResult, submission, submissionList, updateWebhookBody, webhook,
  webhookDeleted, webhookList, webhookWithSecret,
} from "../../src/schemas.ts";

// Both ways assignable, and the same keys: an optional field on one side only is a difference too.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? ([keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false) : false) : false;
type WithoutInstants<T> = Omit<T, "createdAfter" | "createdBefore">;

export const types: true[] = [
  true satisfies Same<Submission, typeof submission.infer>,
  true satisfies Same<SubmissionList, typeof submissionList.infer>,
  true satisfies Same<StatusUpdateResult, typeof statusUpdateResult.infer>,
  true satisfies Same<DeleteResult, typeof deleteResult.infer>,
  // `_gotcha` is the honeypot a form's hidden field fills: not for a client to send.
  true satisfies Same<CreateSubmission, Omit<typeof createSubmissionBody.infer, "_gotcha">>,
  true satisfies Same<Erasure, typeof erasureBody.infer>,
  true satisfies Same<ErasureReceipt, typeof erasureReceipt.infer>,
  true satisfies Same<RetentionRules, typeof retentionRules.infer>,
  true satisfies Same<RetentionPreview, typeof retentionPreview.infer>,
  // the query schemas take text; the client takes the same names, numbers for integers, Dates for instants
  true satisfies Same<WithoutInstants<ExportOptions>, WithoutInstants<Omit<typeof exportQuery.inferIn, "format">>>,
  true satisfies Same<keyof ListOptions, keyof typeof listQuery.inferIn>,
  true satisfies Same<keyof ExportOptions | "format", keyof typeof exportQuery.inferIn>,
  true satisfies Same<Webhook, typeof webhook.infer>,
  true satisfies Same<WebhookWithSecret, typeof webhookWithSecret.infer>,
  true satisfies Same<CreateWebhook, typeof createWebhookBody.infer>,
  true satisfies Same<UpdateWebhook, typeof updateWebhookBody.infer>,
  true satisfies Same<WebhookList, typeof webhookList.infer>,
  true satisfies Same<WebhookDeleted, typeof webhookDeleted.infer>,
  true satisfies Same<Delivery, typeof delivery.infer>,
  true satisfies Same<DeliveryList, typeof deliveryList.infer>,
  true satisfies Same<RetryResult, typeof retryResult.infer>,
  true satisfies Same<ReplayResult, typeof replayResult.infer>,
  true satisfies Same<keyof DeliveriesOptions, keyof typeof deliveriesQuery.inferIn>,
  true satisfies Same<keyof EventsOptions, keyof typeof eventsQuery.inferIn>,
];

export async function typeChecks(): Promise<void> {
  const client = createClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "fs_sk_..." });
  await client.list({ limit: 5, offset: 10, status: "pending", orderBy: "created_at", createdAfter: new Date(), createdBefore: "2025-07-12T10:30:00Z" });
  // @ts-expect-error status is pending or completed
  await client.list({ status: "done" });
  // @ts-expect-error limit is a number
  await client.list({ limit: "5" });
  // @ts-expect-error orderBy is created_at or created_at_desc
  await client.listAll({ orderBy: "created" });
  // @ts-expect-error export has no limit
  client.export({ limit: 5 });
  await client.create({ popupId: "p", data: { email: "a@example.com", nested: { ok: [1, null] } }, device: "mobile" });
  // @ts-expect-error data is required
  await client.create({ popupId: "p" });
  // @ts-expect-error device is one of five
  await client.create({ popupId: "p", data: {}, device: "phone" });
  // @ts-expect-error status is set by the service
  await client.create({ popupId: "p", data: {}, status: "completed" });
  // @ts-expect-error status is pending or completed
  await client.updateStatus("id", "archived");
  const { secret, webhookId } = await client.createWebhook({ url: "https://crm.example.com/hooks", types: ["submission.created"] });
  void secret;
  // @ts-expect-error types are event types
  await client.createWebhook({ url: "https://crm.example.com/hooks", types: ["submission.made"] });
  // @ts-expect-error a secret is made by the service
  await client.createWebhook({ url: "https://crm.example.com/hooks", secret: "whsec_x" });
  await client.updateWebhook(webhookId, { enabled: false, popupId: null });
  // @ts-expect-error enabled is a boolean
  await client.updateWebhook(webhookId, { enabled: "no" });
  const listed = await client.getWebhook(webhookId);
  // @ts-expect-error a read never shows the secret
  void listed.secret;
  await client.webhookDeliveries(webhookId, { status: "failed", limit: 5 });
  // @ts-expect-error delivery statuses are pending, succeeded or failed
  await client.webhookDeliveries(webhookId, { status: "completed" });
  await client.replayWebhook(webhookId, new Date());
  for await (const item of client.export()) {
    const status: "pending" | "completed" = item.status;
    // @ts-expect-error submissions have no accountId
    void item.accountId;
    void status;
  }
}
