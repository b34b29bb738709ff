import type { Answer } from "./answer.ts";

const BASE_HEADERS = {
  "content-type": "application/json",
  // API answers are per key and often personal data: never cached by a browser or proxy.
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/** A JSON answer; `headers` (lower-case names) add to or replace the base ones. */
export function jsonAnswer(body: unknown, status = 200, headers?: Record<string, string>): Answer {
  return jsonTextAnswer(JSON.stringify(body), status, headers);
}

/** A JSON answer from the UTF-8 bytes of JSON text already written. */
export function jsonBytesAnswer(bytes: Uint8Array<ArrayBuffer>, status = 200): Answer {
  return { status, headers: { ...BASE_HEADERS }, body: bytes };
}

/** A JSON answer from JSON text already written. */
export function jsonTextAnswer(text: string, status = 200, headers?: Record<string, string>): Answer {
  return { status, headers: headers ? { ...BASE_HEADERS, ...headers } : { ...BASE_HEADERS }, body: text };
}
