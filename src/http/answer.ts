/**
 * What a route answers: status, headers and body as plain values. The Fetch handler turns an
 * answer into a `Response` at the very end; an adapter that talks to its server directly
 * (formsink/node, through the handler's `answer`) writes it as it is, which in Node saves
 * making a `Response` and its body stream for every request.
 */

export interface Answer {
  status: number;
  /** Header names in lower case; made for this answer (whoever sends it may add to it). */
  headers: Record<string, string>;
  /** Text (sent as UTF-8) or bytes known in full, a stream, or nothing. */
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
}

const encoder = new TextEncoder();

/** The answer as a Fetch `Response`; text gets a known length, as servers then skip chunking. */
export function toResponse(answer: Answer): Response {
  const { status, headers, body } = answer;
  if (typeof body !== "string") return new Response(body, { status, headers });
  const bytes = encoder.encode(body);
  // Added to the answer's own headers, not to a spread copy of them, whose map is a new one for
  // each answer (json.ts says what that costs).
  headers["content-length"] = String(bytes.byteLength);
  return new Response(bytes, { status, headers });
}
