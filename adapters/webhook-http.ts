/**
 * HTTP/1.1 as the webhook transport (./webhook-transport.ts) speaks it: one POST with a
 * Content-Length body, and of the answer its status and whether its connection can carry the
 * next request. One request at a time per connection: no pipelining.
 */

/** What an answer's head tells. */
export interface Answer {
  status: number;
  /** True when the connection may carry another request once this answer's body is read. */
  reusable: boolean;
  /** How long the body is (0 when the answer has none). */
  bodyLength: number;
  /** How much of what was received comes after the head. */
  rest: number;
}

const HEAD_END = "\r\n\r\n";
/** An answer whose head is longer than this is refused rather than read on. */
const MOST_HEAD_LENGTH = 64 * 1024;
const NEEDS_NO_ESCAPE = /^[^\r\n]*$/;

/** The request's first lines, the same for every request to `url`: `POST`, the URL's path and query, and its host. */
export function requestStart(url: URL): string {
  return `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
}

/**
 * The request's bytes: its first lines (`requestStart`, which a caller sending many requests to
 * one URL keeps), the headers, the body's length and the body.
 */
export function requestText(url: URL, headers: Record<string, string>, body: string, start = requestStart(url)): string {
  let text = start;
  for (const [name, value] of Object.entries(headers)) {
    // Line breaks in a header would start another header, or another request.
    if (!NEEDS_NO_ESCAPE.test(name) || !NEEDS_NO_ESCAPE.test(value)) throw new TypeError(`the header ${JSON.stringify(name)} has a line break`);
    text += `${name}: ${value}\r\n`;
  }
  return `${text}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/**
 * The answer's head, once `received` (the bytes so far, as latin1) holds all of it; undefined
 * until then. Interim answers (1xx) are passed over. Throws for what is not an HTTP/1.x answer.
 */
export function readAnswerHead(received: string): Answer | undefined {
  let start = 0;
  for (;;) {
    const end = received.indexOf(HEAD_END, start);
    if (end < 0) {
      if (received.length - start > MOST_HEAD_LENGTH) throw new Error("the receiver's answer has too long a head");
      return undefined;
    }
    const lines = received.slice(start, end).split("\r\n");
    const statusLine = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: |$)/.exec(lines[0]!);
    if (!statusLine) throw new Error("the receiver's answer is not HTTP/1.1");
    const status = Number(statusLine[2]);
    start = end + HEAD_END.length;
    if (status < 200 && status !== 101) continue;
    const fields = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim().toLowerCase());
    }
    const length = fields.get("content-length");
    const noBody = status === 204 || status === 304;
    const bodyLength = noBody ? 0 : length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
    const connection = fields.get("connection") ?? "";
    const keptAlive = statusLine[1] === "1" ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
    const reusable = keptAlive && status !== 101 && bodyLength !== undefined && !fields.has("transfer-encoding");
    return { status, reusable, bodyLength: bodyLength ?? 0, rest: received.length - start };
  }
}
