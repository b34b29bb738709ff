/**
 * HTML form bodies, so that a plain `<form method="post">` works without JavaScript. Fields
 * come back as text, in the order sent; a name sent more than once (checkboxes) keeps every
 * value. Files are refused: formsink stores text.
 */
import { checkTextEncoding, decodeUtf8, readBodyBytes } from "./body.ts";
import { HttpError } from "./errors.ts";
import { parseMultipart } from "./multipart.ts";
import type { ApiRequest } from "./request.ts";

export const URLENCODED = "application/x-www-form-urlencoded";
export const MULTIPART = "multipart/form-data";

/** Field name to its values, in the order first seen. */
export type FormFields = Map<string, string[]>;

/** Reads a form body of media type `type` (URLENCODED or MULTIPART), up to `maxBytes`. */
export async function readFormBody(request: ApiRequest, type: string, maxBytes: number): Promise<{ fields: FormFields; bytes: Uint8Array }> {
  checkTextEncoding(request);
  const bytes = await readBodyBytes(request, maxBytes);
  const fields = type === MULTIPART ? fromMultipart(bytes, request.headers.get("content-type")!) : parseUrlencoded(bytes);
  return { fields, bytes };
}

function parseUrlencoded(bytes: Uint8Array): FormFields {
  const fields: FormFields = new Map();
  const pairs = decodeUtf8(bytes).split("&");
  pairs.forEach((pair, index) => {
    if (pair === "") return;
    const equals = pair.indexOf("=");
    const [name, value] = equals === -1 ? [pair, ""] : [pair.slice(0, equals), pair.slice(equals + 1)];
    add(fields, decodeFormComponent(name, index), decodeFormComponent(value, index));
  });
  return fields;
}

function decodeFormComponent(text: string, index: number): string {
  const decoded = decodeUrlencoded(text);
  if (decoded === undefined) throw new HttpError(400, `Form field ${index + 1} is not valid URL-encoded UTF-8`);
  return decoded;
}

/**
 * A name or value of `application/x-www-form-urlencoded` text (a form body, a URL's query), or
 * undefined when its escapes are not UTF-8. Not URLSearchParams: it turns bad escapes and bytes
 * that are not UTF-8 into U+FFFD, and the contract is to keep text as it was sent or refuse it.
 */
export function decodeUrlencoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

function fromMultipart(bytes: Uint8Array, contentType: string): FormFields {
  const fields: FormFields = new Map();
  for (const { name, filename, content } of parseMultipart(bytes, contentType)) {
    if (filename !== undefined) {
      // A file input left empty still sends a part, with an empty file name and no content.
      if (filename === "" && content.byteLength === 0) continue;
      throw new HttpError(415, `Form field ${name} is a file; file uploads are not supported`);
    }
    let value: string;
    try {
      value = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(content);
    } catch {
      throw new HttpError(400, `Form field ${name} is not valid UTF-8`);
    }
    add(fields, name, value);
  }
  return fields;
}

function add(fields: FormFields, name: string, value: string): void {
  const values = fields.get(name);
  if (values) values.push(value);
  else fields.set(name, [value]);
}
