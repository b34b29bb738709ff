import type { Answer } from "./answer.ts";

// bench/http.ts (every route): not a spread of one shared object. Under Node 20's V8 a spread
// copy to which properties are then added (the request id, the length) gets a map of its own
// each time, which cost a get more than the rest of the handler's JavaScript; an object
// literal's copies share their maps.
/** The headers of every JSON answer, in an object made for it (whoever sends it adds to it). */
function baseHeaders(): Record<string, string> {
  return {
    "content-type": "application/json",
    // API answers are per key and often personal data: never cached by a browser or proxy.
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
}

/** A JSON answer; `headers` (lower-case names) add to or replace the base ones. */
export function jsonAnswer(body: unknown, status = 200, headers?: Record<string, string>): Answer {
  return jsonTextAnswer(JSON.stringify(body), status, headers);
}

/** A JSON answer from the UTF-8 bytes of JSON text already written. */
export function jsonBytesAnswer(bytes: Uint8Array<ArrayBuffer>, status = 200): Answer {
  return { status, headers: baseHeaders(), body: bytes };
}

/** A JSON answer from JSON text already written. */
export function jsonTextAnswer(text: string, status = 200, headers?: Record<string, string>): Answer {
  return { status, headers: headers ? Object.assign(baseHeaders(), headers) : baseHeaders(), body: text };
}
