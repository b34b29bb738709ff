/**
 * Node's request in the two forms a handler may take: the core's narrow request, read
 * straight from the IncomingMessage (for `answer`, see node.ts), or a Fetch `Request` with a
 * streamed body (for any other handler). Either way, a body the handler leaves unread is read
 * and dropped, so its answer reaches the client and the keep-alive connection serves the next
 * request.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { finished } from "node:stream";
import { bodyCutShort, bodyReadByHost } from "../src/http/errors.ts";
import type { ApiRequest } from "../src/http/request.ts";
import { bodyAlreadyRead } from "./node-consumed-body.ts";

export interface RequestTarget {
  method: string;
  /** Whole and normalised, as `Request#url` has it. */
  url: string;
  /** Its path when the URL is plain and has no query: `ApiRequest#plainPath`. */
  plainPath: string | undefined;
}

/** The narrow request the core reads: headers as Node parsed them, the body without a web stream. */
export function apiRequest(req: IncomingMessage, target: RequestTarget): ApiRequest {
  return new NodeApiRequest(req, target);
}

// bench/http.ts (every route): a class, not an object of closures made for each request.
class NodeApiRequest implements ApiRequest {
  readonly method: string;
  readonly url: string;
  readonly plainPath: string | undefined;
  readonly headers: RawHeaders;
  readonly #req: IncomingMessage;
  #bodyRead = false;

  constructor(req: IncomingMessage, { method, url, plainPath }: RequestTarget) {
    this.method = method;
    this.url = url;
    this.plainPath = plainPath;
    this.headers = new RawHeaders(req.rawHeaders);
    this.#req = req;
  }

  readBody(maxBytes: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
    if (this.#bodyRead) return Promise.reject(new TypeError("The request body was already read"));
    // A body a host app read first (node-consumed-body.ts) would never end.
    if (bodyAlreadyRead(this.#req)) return Promise.reject(bodyReadByHost());
    this.#bodyRead = true;
    return this.method === "GET" || this.method === "HEAD" ? Promise.resolve(new Uint8Array(0)) : readWhole(this.#req, maxBytes);
  }
}

/** A request's headers as Fetch's `Headers#get` reads them, from Node's raw list. */
class RawHeaders {
  readonly #raw: readonly string[];

  constructor(raw: readonly string[]) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    return rawHeader(this.#raw, name);
  }
}

// bench/http.ts (every route): Node's object of every header's values (`headersDistinct`), built
// for the few a handler reads, cost more than looking those few up in the raw list.
/**
 * A header's values joined with ", ", as Fetch's `Headers#get` gives them, or null: looked up in
 * Node's raw list of names and values, whose names keep the client's case.
 */
function rawHeader(rawHeaders: readonly string[], name: string): string | null {
  const wanted = name.toLowerCase();
  let value: string | null = null;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const field = rawHeaders[i]!;
    if (field.length !== wanted.length || (field !== wanted && field.toLowerCase() !== wanted)) continue;
    value = value === null ? rawHeaders[i + 1]! : `${value}, ${rawHeaders[i + 1]}`;
  }
  return value;
}

/**
 * A real Fetch request. No AbortSignal is attached: undici's signal bookkeeping costs much of
 * the throughput and adds pauses (bench/node-bridge.ts); a client that goes away still stops
 * the work that matters, as the response stream is cancelled when the answer is written.
 */
export function fetchRequest(req: IncomingMessage, res: ServerResponse, { method, url }: RequestTarget): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(url, {
    method,
    headers,
    body: hasBody ? requestBody(req, res) : null,
    // Required by the Fetch spec for a streamed request body.
    duplex: "half",
  } as RequestInit);
}

/** The whole body; undefined (and the rest read and dropped) once it passes `maxBytes`. */
function readWhole(req: IncomingMessage, maxBytes: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
  // bench/http.ts (create): a small body arrives with its headers, and Node has parsed it whole
  // and buffered it by the time the handler asks: taken at once, without listening for it.
  if (req.complete && req.readableLength <= maxBytes) return Promise.resolve(bufferedBody(req));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.byteLength;
      if (received > maxBytes) {
        stop();
        // Drained, not destroyed: the answer (a 413) still reaches the client, and the
        // connection serves its next request.
        req.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      const whole = new Uint8Array(received);
      let offset = 0;
      for (const chunk of chunks) {
        whole.set(chunk, offset);
        offset += chunk.byteLength;
      }
      resolve(whole);
    };
    const onError = () => {
      stop();
      reject(bodyCutShort());
    };
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onError);
  });
}

/** What `req` holds of a body it has received whole: copied, as a Buffer may share its memory. */
function bufferedBody(req: IncomingMessage): Uint8Array<ArrayBuffer> {
  const buffered = req.read() as Buffer | null;
  return buffered === null ? new Uint8Array(0) : new Uint8Array(buffered);
}

/**
 * The request body as a web stream that reads from the socket only when the handler reads.
 * Not `Readable.toWeb(req)`: that reads ahead, so a body the handler never reads (a 401, or a
 * 413 for a declared length) stalls the keep-alive connection, and cancelling it destroys the
 * request, which leaves the connection unusable after the answer (a 413 mid-stream). Here,
 * whatever the handler leaves unread - it cancelled, or it answered - is read and dropped.
 */
function requestBody(req: IncomingMessage, res: ServerResponse): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let settled = false;
  const onData = (chunk: Buffer) => {
    controller.enqueue(chunk);
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  const discardRest = () => {
    if (settled) return;
    settled = true;
    req.off("data", onData);
    req.resume();
    controller.error(new Error("the response was sent before the request body was read"));
  };
  req.pause();
  req.on("data", onData);
  finished(req, (error) => {
    if (settled) return;
    settled = true;
    if (error) controller.error(error);
    else controller.close();
  });
  res.once("finish", discardRest);
  return new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => void req.resume(),
      cancel: discardRest,
    },
    // Nothing is read before the handler asks for it.
    { highWaterMark: 0 },
  );
}
