/**
 * The body of a create, JSON or an HTML form, in one shape. Form fields whose names start with
 * `_` steer the answer and are never stored: `_key` (a publishable key, for forms without
 * JavaScript), `_redirect` (where to send the browser), `_gotcha` (the honeypot); any other
 * `_` field is dropped. Every other field but `popupId` is the submission's `data`.
 */
import { jsonObject, mediaType, readJsonBodyAndBytes } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import { type FormFields, MULTIPART, readFormBody, URLENCODED } from "../http/form.ts";
import type { Limits } from "../options.ts";
import type { RequestContext } from "./context.ts";

export interface CreateRequest {
  /** What the create schema validates: `popupId`, `data` and, from JSON, the optional fields. */
  body: unknown;
  /** Set for form posts: the fields that steer the answer. */
  form?: { key?: string; redirect?: string };
  /** A filled-in `_gotcha`: answer as if stored, store nothing. */
  honeypot: boolean;
  /** The media type and the bytes as sent: what a retry under the same Idempotency-Key must repeat. */
  mediaType: string;
  bytes: Uint8Array;
}

// Room above the data depth limit, so that a body a little too deep still gets the precise
// message of checkSubmissionData; only pathological nesting meets this one.
export const MAX_NESTING_SLACK = 16;

const HONEYPOT = "_gotcha";
const CONTROL_FIELDS = ["_key", "_redirect", HONEYPOT] as const;

export function isFormPost(request: Request): boolean {
  const type = mediaType(request.headers.get("content-type"));
  return type === URLENCODED || type === MULTIPART;
}

/** The create body, read once per request: the access step may have read it already. */
export async function createRequestOf(request: Request, context: RequestContext): Promise<CreateRequest> {
  context.createRequest ??= await readCreateRequest(request, context.limits);
  return context.createRequest;
}

async function readCreateRequest(request: Request, limits: Limits): Promise<CreateRequest> {
  const type = mediaType(request.headers.get("content-type"));
  if (type === URLENCODED || type === MULTIPART) {
    const { fields, bytes } = await readFormBody(request, type, limits.maxBodyBytes);
    return { ...fromForm(fields), mediaType: type, bytes };
  }
  if (type !== "application/json") {
    throw new HttpError(415, `Content-Type must be application/json, ${URLENCODED} or ${MULTIPART}`);
  }
  const { value, bytes } = await readJsonBodyAndBytes(request, {
    maxBytes: limits.maxBodyBytes,
    maxNesting: limits.maxDataDepth + MAX_NESTING_SLACK,
  });
  // `_gotcha` stays in the body: the create schema declares it (a string) like any other field.
  const body = jsonObject(value);
  return { body, honeypot: isFilled(body[HONEYPOT]), mediaType: type, bytes };
}

function fromForm(fields: FormFields): Pick<CreateRequest, "body" | "form" | "honeypot"> {
  const single = (name: string): string | undefined => {
    const values = fields.get(name);
    if (values && values.length > 1) throw new HttpError(400, `Form field ${name} must be given at most once`);
    return values?.[0];
  };
  const [key, redirect, gotcha] = CONTROL_FIELDS.map(single);
  const data = Object.fromEntries(
    [...fields]
      .filter(([name]) => name !== "popupId" && !name.startsWith("_"))
      .map(([name, values]) => [name, values.length === 1 ? values[0]! : values]),
  );
  const popupId = single("popupId");
  return {
    body: popupId === undefined ? { data } : { popupId, data },
    form: { key, redirect },
    honeypot: isFilled(gotcha),
  };
}

function isFilled(honeypot: unknown): boolean {
  return honeypot !== undefined && honeypot !== "";
}
