/** The privacy routes, for secret keys: erasure by data subject and retention rules. */
import type { Answer } from "../http/answer.ts";
import { jsonObject, readJsonBody } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import { jsonAnswer } from "../http/json.ts";
import type { ApiRequest } from "../http/request.ts";
import { erase, publicReceipt } from "../privacy/erasure.ts";
import { previewRetention } from "../privacy/retention.ts";
import { erasureBody, retentionRules } from "../schemas.ts";
import { isPrivacyStore, type PrivacyStore, type SubmissionStore } from "../store.ts";
import { validate } from "../validate.ts";
import type { KeyedContext } from "./context.ts";

export async function eraseSubmissions(request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = privacyStoreOf(context);
  const body = validate(erasureBody, jsonObject(await readJsonBody(request, context.limits)), "erasure");
  const result = await erase(store, context.principal.accountId, body);
  if (result.erasureId === null) return jsonAnswer(result);
  return jsonAnswer(result, 201, { location: `${context.basePath}/api/erasure/${result.erasureId}` });
}

export async function getErasure(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = privacyStoreOf(context);
  const erasureId = (context.params.erasureId ?? "").toLowerCase();
  const receipt = await store.getErasureReceipt(context.principal.accountId, erasureId);
  if (!receipt) throw new HttpError(404, "Erasure not found");
  return jsonAnswer(publicReceipt(receipt));
}

export async function putRetention(request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = privacyStoreOf(context);
  const { rules } = validate(retentionRules, jsonObject(await readJsonBody(request, context.limits)), "retention");
  await store.setRetentionRules(context.principal.accountId, rules);
  return jsonAnswer({ rules });
}

export async function getRetention(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  return jsonAnswer({ rules: await privacyStoreOf(context).getRetentionRules(context.principal.accountId) });
}

export async function previewRetentionRules(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const store = privacyStoreOf(context);
  const now = Date.now();
  const rules = await store.getRetentionRules(context.principal.accountId);
  return jsonAnswer({ asOf: new Date(now).toISOString(), rules: await previewRetention(store, context.principal.accountId, rules, now) });
}

function privacyStoreOf(context: KeyedContext): SubmissionStore & PrivacyStore {
  if (!isPrivacyStore(context.store)) {
    throw new HttpError(501, "This deployment's store keeps no erasure receipts or retention rules (it does not implement PrivacyStore)");
  }
  return context.store;
}
