/** The webhook routes, for secret keys: an account's endpoints, their deliveries, retry and replay. */
import type { Answer } from "../http/answer.ts";
import { jsonObject, readJsonBody } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import { jsonAnswer } from "../http/json.ts";
import { singleValuedQuery } from "../http/query.ts";
import type { ApiRequest } from "../http/request.ts";
import { beforeBound } from "../instant.ts";
import { createWebhookBody, DELIVERIES_QUERY_PARAMETERS, deliveriesQuery, replayBody, updateWebhookBody } from "../schemas.ts";
import { isWebhookStore, type WebhookRecord, type WebhookStore } from "../store.ts";
import { validate } from "../validate.ts";
import { addWebhook, changeWebhook, publicDeliveryPage, publicWebhook, rotateWebhookSecret, webhookWithSecret } from "../webhook-endpoints.ts";
import type { KeyedContext } from "./context.ts";

export async function createWebhook(request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = webhookStoreOf(context);
  const body = validate(createWebhookBody, jsonObject(await readJsonBody(request, context.limits)), "webhook");
  const added = await addWebhook(store, context.principal.accountId, body, context.webhooks);
  return jsonAnswer(webhookWithSecret(added), 201, { location: `${context.basePath}/api/webhooks/${added.webhook.webhookId}` });
}

export async function listWebhooks(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const webhooks = await webhookStoreOf(context).listWebhooks(context.principal.accountId);
  return jsonAnswer({ items: webhooks.map((webhook) => publicWebhook(webhook)) });
}

export async function getWebhook(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  return jsonAnswer(publicWebhook(await existingWebhook(webhookStoreOf(context), context)));
}

export async function updateWebhook(request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = webhookStoreOf(context);
  const body = validate(updateWebhookBody, jsonObject(await readJsonBody(request, context.limits)), "webhook");
  const changed = await changeWebhook(store, context.principal.accountId, webhookIdParam(context), body, context.webhooks);
  if (!changed) throw webhookNotFound();
  return jsonAnswer(publicWebhook(changed));
}

export async function deleteWebhook(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const webhookId = webhookIdParam(context);
  if (!(await webhookStoreOf(context).deleteWebhook(context.principal.accountId, webhookId))) throw webhookNotFound();
  return jsonAnswer({ message: "Webhook deleted", webhookId });
}

export async function rotateSecret(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const rotated = await rotateWebhookSecret(webhookStoreOf(context), context.principal.accountId, webhookIdParam(context));
  if (!rotated) throw webhookNotFound();
  return jsonAnswer(webhookWithSecret(rotated));
}

export async function listDeliveries(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = webhookStoreOf(context);
  const { status, cursor, limit } = validate(deliveriesQuery, singleValuedQuery(context.url, DELIVERIES_QUERY_PARAMETERS), "query");
  const webhook = await existingWebhook(store, context);
  const page = await store.listDeliveries(context.principal.accountId, webhook.webhookId, { status, after: cursor, limit });
  return jsonAnswer(publicDeliveryPage(page));
}

export async function retryDelivery(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = webhookStoreOf(context);
  const webhook = await existingWebhook(store, context);
  const eventId = context.params.eventId ?? "";
  if (!(await store.retryDelivery(context.principal.accountId, webhook.webhookId, eventId, Date.now()))) {
    throw new HttpError(404, "Delivery not found: this webhook has no delivery of that event");
  }
  return jsonAnswer({ message: "Delivery queued", eventId }, 202);
}

export async function replayDeliveries(request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = webhookStoreOf(context);
  const { since } = validate(replayBody, jsonObject(await readJsonBody(request, context.limits)), "replay");
  const webhook = await existingWebhook(store, context);
  // Events stamped at or after the instant: at or after the first whole millisecond not before it.
  const replayed = await store.replayDeliveries(context.principal.accountId, webhook.webhookId, beforeBound(since), Date.now());
  return jsonAnswer({ replayed }, 202);
}

function webhookStoreOf(context: KeyedContext): WebhookStore {
  if (!isWebhookStore(context.store)) {
    throw new HttpError(501, "This deployment's store keeps no webhooks (it does not implement WebhookStore)");
  }
  return context.store;
}

/** The endpoint the path names, of this account (another account's is 404, as a missing one). */
async function existingWebhook(store: WebhookStore, context: KeyedContext): Promise<WebhookRecord> {
  const webhook = await store.getWebhook(context.principal.accountId, webhookIdParam(context));
  if (!webhook) throw webhookNotFound();
  return webhook;
}

function webhookIdParam(context: KeyedContext): string {
  return (context.params.webhookId ?? "").toLowerCase();
}

function webhookNotFound(): HttpError {
  return new HttpError(404, "Webhook not found");
}
