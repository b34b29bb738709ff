/**
 * What a route answers: status, headers and body as plain values. The Fetch handler turns an
 * answer into a `Response` at the very end; the Node adapter, given formsink's own handler,
 * writes it to the socket as it is. Building a `Response` in Node costs ~12 us (its body is a
 * web stream, whose constructor alone is ~10 us) and reading it back as much again: more than
 * a whole request of a raw node:http server (bench/http.ts).
 */

export interface Answer {
  status: number;
  /** Header names in lower case; made for this answer (whoever sends it may add to it). */
  headers: Record<string, string>;
  /** Text (sent as UTF-8) or bytes known in full, a stream, or nothing. */
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
}

/** How a handler answers without Fetch objects, for adapters that can write plain answers. */
export type Answering<Connection> = (request: Request, connection?: Connection) => Promise<Answer>;

const encoder = new TextEncoder();

/** The answer as a Fetch `Response`; text gets a known length, as servers then skip chunking. */
export function toResponse(answer: Answer): Response {
  if (typeof answer.body !== "string") return new Response(answer.body, { status: answer.status, headers: answer.headers });
  const bytes = encoder.encode(answer.body);
  return new Response(bytes, { status: answer.status, headers: { ...answer.headers, "content-length": String(bytes.byteLength) } });
}

// Keyed by the Fetch handler, so that only the adapter that is given the handler finds it.
const answeringByHandler = new WeakMap<object, Answering<never>>();

/** Records that `handler` is `answering` turned into Responses. */
export function registerAnswering<Connection>(handler: object, answering: Answering<Connection>): void {
  answeringByHandler.set(handler, answering as Answering<never>);
}

/** The plain-answer form of a handler made by `createSubmissionsHandler`; undefined for any other. */
export function answeringOf<Connection>(handler: object): Answering<Connection> | undefined {
  return answeringByHandler.get(handler) as Answering<Connection> | undefined;
}
