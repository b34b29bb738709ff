/**
 * The body of a create, JSON or an HTML form, in one shape. Form fields whose names start with
 * `_` steer the answer and are never stored: `_key` (a publishable key, for forms without
 * JavaScript), `_redirect` (where to send the browser), `_gotcha` (the honeypot); any other
 * `_` field is dropped. Every other field but `popupId` is the submission's `data`.
 */
import { jsonObject, mediaType, readJsonBodyAndBytes } from "../../http/body.ts";
import { HttpError } from "../../http/errors.ts";
import { type FormFields, MULTIPART, readFormBody, URLENCODED } from "../../http/form.ts";
import type { ApiRequest, RequestHead } from "../../http/request.ts";
import type { Limits } from "../../options.ts";

export interface CreateBody {
  /** What the create schema validates: `popupId`, `data` and, from JSON, the optional fields. */
  fields: unknown;
  /** Set for form posts: the fields that steer the answer. */
  form?: { key?: string; redirect?: string };
  /** A filled-in `_gotcha`: answer as if stored, store nothing. */
  honeypot: boolean;
  /** The media type and the bytes as sent: what a retry under the same Idempotency-Key must repeat. */
  mediaType: string;
  bytes: Uint8Array;
}

const HONEYPOT = "_gotcha";
const CONTROL_FIELDS = ["_key", "_redirect", HONEYPOT] as const;

export function isFormPost(request: RequestHead): boolean {
  const type = mediaType(request.headers.get("content-type"));
  return type === URLENCODED || type === MULTIPART;
}

export async function readCreateBody(request: ApiRequest, limits: Limits): Promise<CreateBody> {
  const type = mediaType(request.headers.get("content-type"));
  if (type === URLENCODED || type === MULTIPART) {
    const { fields, bytes } = await readFormBody(request, type, limits.maxBodyBytes);
    return { ...fromForm(fields), mediaType: type, bytes };
  }
  if (type !== "application/json") {
    throw new HttpError(415, `Content-Type must be application/json, ${URLENCODED} or ${MULTIPART}`);
  }
  const { value, bytes } = await readJsonBodyAndBytes(request, limits);
  const { [HONEYPOT]: gotcha, ...fields } = jsonObject(value);
  if (gotcha !== undefined && typeof gotcha !== "string") throw new HttpError(400, `${HONEYPOT} must be a string`);
  return { fields, honeypot: isFilled(gotcha), mediaType: type, bytes };
}

function fromForm(fields: FormFields): Pick<CreateBody, "fields" | "form" | "honeypot"> {
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
    fields: popupId === undefined ? { data } : { popupId, data },
    form: { key, redirect },
    honeypot: isFilled(gotcha),
  };
}

function isFilled(honeypot: unknown): boolean {
  return honeypot !== undefined && honeypot !== "";
}
