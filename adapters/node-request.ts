/**
 * A light `Request` for formsink's own handler on node:http. The core reads the method, the
 * URL, a few headers and the body; undici's `Request` costs ~6 us to make and its body stream
 * ~10 us more, while a raw node:http server spends ~11 us on a whole request. This object
 * answers those reads from the IncomingMessage, and the body through `READ_WHOLE_BODY` without
 * a web stream. Anything else a hook may touch (`signal`, `clone()`, `formData()`...) is
 * answered by a real `Request`, made on first use. It is `instanceof Request` (its prototype's
 * prototype is `Request.prototype`), but nothing global changes: it is made only here, and only
 * formsink's handler receives it (other handlers get a real `Request`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { finished } from "node:stream";
import { type DirectBody, READ_WHOLE_BODY } from "../src/http/body.ts";

const INCOMING = Symbol("incoming");
const RESPONSE = Symbol("response");
const BODY = Symbol("body");
const BODY_READ = Symbol("bodyRead");
const HEADERS = Symbol("headers");
const FULL = Symbol("full");

export class NodeRequest implements DirectBody {
  readonly method: string;
  readonly url: string;
  declare [INCOMING]: IncomingMessage;
  declare [RESPONSE]: ServerResponse;
  declare [BODY]: ReadableStream<Uint8Array> | null | undefined;
  declare [BODY_READ]: boolean;
  declare [HEADERS]: NodeHeaders | undefined;
  declare [FULL]: Request | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, method: string, url: string) {
    this.method = method;
    this.url = url;
    this[INCOMING] = req;
    this[RESPONSE] = res;
    this[BODY] = undefined;
    this[BODY_READ] = false;
    this[HEADERS] = undefined;
    this[FULL] = undefined;
  }

  get headers(): Headers {
    return (this[HEADERS] ??= new NodeHeaders(this[INCOMING].rawHeaders)) as unknown as Headers;
  }

  /** The body as a web stream, made on first use (see `requestBody`). */
  get body(): ReadableStream<Uint8Array> | null {
    if (this[BODY] === undefined) {
      if (this.method === "GET" || this.method === "HEAD") this[BODY] = null;
      else {
        if (this[BODY_READ]) throw new TypeError("the request body was already read");
        this[BODY] = requestBody(this[INCOMING], this[RESPONSE]);
      }
    }
    return this[BODY];
  }

  [READ_WHOLE_BODY](maxBytes: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
    if (this[BODY_READ] || this[BODY] !== undefined) return Promise.reject(new TypeError("the request body was already read"));
    this[BODY_READ] = true;
    if (this.method === "GET" || this.method === "HEAD") return Promise.resolve(new Uint8Array(0));
    return readWhole(this[INCOMING], maxBytes);
  }
}

/** The real Request, for whatever the light one does not answer itself. */
function fullRequest(request: NodeRequest): Request {
  if (request[FULL] === undefined) {
    const { method, url } = request;
    const headers = new Headers(request.headers);
    let body: ReadableStream<Uint8Array> | null;
    if (request[BODY_READ]) {
      // Read through READ_WHOLE_BODY: a Request whose body is used up, as a read would leave it.
      body = method === "GET" || method === "HEAD" ? null : new ReadableStream({ start: (c) => c.close() });
    } else {
      body = request.body;
    }
    request[FULL] = new Request(url, { method, headers, body, duplex: "half" } as RequestInit);
    if (request[BODY_READ] && body !== null) void request[FULL].arrayBuffer().catch(() => {});
  }
  return request[FULL];
}

/**
 * Headers from Node's raw list: `get` and `has` from a plain object (names lower-cased, repeated
 * fields joined by ", " as Fetch does), the rest of `Headers` from a real one made on first use;
 * once that exists (a hook may change it), every call goes to it.
 */
class NodeHeaders {
  declare [INCOMING]: string[];
  declare [HEADERS]: Record<string, string> | undefined;
  declare [FULL]: Headers | undefined;

  constructor(raw: string[]) {
    this[INCOMING] = raw;
    this[HEADERS] = undefined;
    this[FULL] = undefined;
  }

  get(name: string): string | null {
    if (this[FULL]) return this[FULL].get(name);
    return byName(this)[name.toLowerCase()] ?? null;
  }

  has(name: string): boolean {
    if (this[FULL]) return this[FULL].has(name);
    return byName(this)[name.toLowerCase()] !== undefined;
  }
}

function byName(headers: NodeHeaders): Record<string, string> {
  let values = headers[HEADERS];
  if (values === undefined) {
    values = Object.create(null) as Record<string, string>;
    const raw = headers[INCOMING];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const seen = values[name];
      values[name] = seen === undefined ? raw[i + 1]! : `${seen}, ${raw[i + 1]!}`;
    }
    headers[HEADERS] = values;
  }
  return values;
}

function fullHeaders(headers: NodeHeaders): Headers {
  if (headers[FULL] === undefined) {
    const full = new Headers();
    const raw = headers[INCOMING];
    for (let i = 0; i < raw.length; i += 2) full.append(raw[i]!, raw[i + 1]!);
    headers[FULL] = full;
  }
  return headers[FULL];
}

/**
 * Puts `base`'s prototype under `light`'s, and gives `light` every method and getter of `base`
 * that it lacks, answered by the real object `full(this)` returns.
 */
function delegate<T extends object>(light: { prototype: T }, base: { prototype: object }, full: (self: T) => object): void {
  Object.setPrototypeOf(light.prototype, base.prototype);
  for (const key of Reflect.ownKeys(base.prototype)) {
    if (key === "constructor" || Object.hasOwn(light.prototype, key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(base.prototype, key)!;
    if (typeof descriptor.value === "function") {
      const method = descriptor.value as (...args: unknown[]) => unknown;
      Object.defineProperty(light.prototype, key, {
        configurable: true,
        writable: true,
        value(this: T, ...args: unknown[]) {
          return method.apply(full(this), args);
        },
      });
    } else if (descriptor.get) {
      const getter = descriptor.get;
      Object.defineProperty(light.prototype, key, {
        configurable: true,
        get(this: T) {
          return getter.call(full(this));
        },
      });
    }
  }
}

delegate(NodeRequest, Request, fullRequest);
delegate(NodeHeaders, Headers, fullHeaders);

/** The whole body; undefined (and the rest read and dropped) once it passes `maxBytes`. */
function readWhole(req: IncomingMessage, maxBytes: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
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
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onAborted = () => onError(new Error("the client went away while sending the body"));
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}

/**
 * The request body as a web stream that reads from the socket only when the handler reads.
 * Not `Readable.toWeb(req)`: that reads ahead, so a body the handler never reads (a 401, or a
 * 413 for a declared length) stalls the keep-alive connection, and cancelling it destroys the
 * request, which leaves the connection unusable after the answer (a 413 mid-stream). Here,
 * whatever the handler leaves unread - it cancelled, or it answered - is read and dropped, so
 * the answer reaches the client and the connection serves the next request.
 */
export function requestBody(req: IncomingMessage, res: ServerResponse): ReadableStream<Uint8Array> {
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
