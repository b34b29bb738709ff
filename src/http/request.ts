/**
 * The request as the core reads it: method, URL, headers and a bounded body. Each server
 * adapter makes one from what its server gives; `fromFetchRequest` makes one from a Fetch
 * `Request`. Nothing else of a request is read, so an adapter that never makes Fetch objects
 * (formsink/node) answers without their cost.
 */
import { bodyCutShort, bodyReadByHost } from "./errors.ts";

/** Method, URL and headers: what hooks such as `authenticate` and `clientAddress` are given. */
export interface RequestHead {
  /** E.g. `POST`. */
  readonly method: string;
  /** Absolute, as `Request#url` has it, e.g. `http://localhost:8787/api/submission?limit=5`. */
  readonly url: string;
  /**
   * A header's value, or null when the request has none; names are case-insensitive, and a
   * field sent more than once comes joined with ", " (as Fetch `Headers#get` does, so a
   * Fetch `Request` is a `RequestHead` as it is).
   */
  readonly headers: { get(name: string): string | null };
}

/** A request the handler can answer: its head, and its body read once, up to a limit. */
export interface ApiRequest extends RequestHead {
  /**
   * Optional: the URL's path, from an adapter that wrote `url` as an origin the URL parser
   * takes followed by this path, one of characters the parser leaves as they are, without
   * query or fragment (what `plainPathOf` in plain-path.ts finds): the handler routes on it
   * as it is. Without it, the handler finds the path in `url`.
   */
  readonly plainPath?: string | undefined;
  /**
   * The whole body (empty when there is none). Resolves undefined as soon as the body passes
   * `maxBytes`, without waiting for the rest; the adapter drops the rest, so the answer still
   * reaches a client that is sending. Rejects with `bodyReadByHost()` when the body was read
   * before the handler got it.
   */
  readBody(maxBytes: number): Promise<Uint8Array<ArrayBuffer> | undefined>;
}

/** A Fetch `Request` as the core reads it. */
export function fromFetchRequest(request: Request): ApiRequest {
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    readBody: (maxBytes) => readStream(request, maxBytes),
  };
}

async function readStream(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (request.bodyUsed) throw bodyReadByHost();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read().catch(() => Promise.reject(bodyCutShort()));
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
