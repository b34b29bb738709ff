/**
 * Node adapter: serves a Fetch handler on node:http, with streamed request and response
 * bodies, keep-alive, and a graceful close that lets in-flight requests finish. formsink's own
 * handler is run through its `answer`, without Fetch objects (see createRequestListener).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { SubmissionsHandler } from "../src/handler.ts";
import type { Answer } from "../src/http/answer.ts";
import { bodyReadByHost, INTERNAL_ERROR_MESSAGE, toErrorAnswer } from "../src/http/errors.ts";
import { PLAIN_PATH_CHARACTERS, parsedOrigin } from "../src/http/plain-path.ts";
import { bodyAlreadyRead, consumedBodyError, originalUrl } from "./node-consumed-body.ts";
import { apiRequest, fetchRequest, type RequestTarget } from "./node-request.ts";
import {
  DEFAULT_HOSTNAME, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS, DEFAULT_PORT, type FetchHandler, reportError, type RunningServer,
  type ServeOptions, serverUrl,
} from "./server.ts";

export type { ConnectionInfo, FetchHandler, RunningServer, ServeOptions } from "./server.ts";
export { type ClosableWebhookTransport, createWebhookTransport, type WebhookTransportNodeOptions } from "./webhook-transport.ts";

/**
 * A Fetch handler, which may also answer plain requests as `createSubmissionsHandler`'s does
 * (its `answer`): such a handler is run without Fetch objects.
 */
export type NodeHandler = FetchHandler & Partial<Pick<SubmissionsHandler, "answer">>;

export interface NodeServer extends RunningServer {
  server: Server;
}

/**
 * Serves a handler on node:http, run as `createRequestListener` runs it: a handler with an
 * `answer` (formsink's own) through that, without Fetch objects; any other, one that wraps
 * formsink's too, with a real `Request` and `Response`.
 */
export async function serve(handler: NodeHandler, options: ServeOptions = {}): Promise<NodeServer> {
  let closing = false;
  const listener = createRequestListener(handler, {
    onError: options.onError,
    // Once closing, answers ask the client to drop the connection, and the connection is
    // closed as soon as it is idle.
    beforeRespond: (res) => {
      if (!closing) return;
      res.setHeader("connection", "close");
      res.once("finish", () => server.closeIdleConnections());
    },
  });
  // Handlers still running: a client that went away closes its connection, not the handler's
  // work (a create may still be writing), and close() waits for both before its caller closes
  // the store under that work.
  let running = 0;
  const whenNoneRunning = new Set<() => void>();
  const counted = (req: IncomingMessage, res: ServerResponse) => {
    running++;
    void listener(req, res).finally(() => {
      if (--running > 0) return;
      for (const done of whenNoneRunning) done();
      whenNoneRunning.clear();
    });
  };
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const server = createServer(
    {
      // Headers come in one go from any real client; a body is at most 64 KiB (src/http/body.ts).
      // A client that trickles its headers (slowloris) holds a connection, and past
      // --max-connections every new client is turned away, until its headers time out.
      headersTimeout: Math.min(idleTimeoutMs, 10_000),
      requestTimeout: 60_000,
      // How often Node looks for requests past those two timeouts: its default, 30 s, let a
      // trickling client stay up to 30 s past its timeout.
      connectionsCheckingInterval: 1000,
      keepAliveTimeout: Math.min(idleTimeoutMs, 5_000),
    },
    counted,
  );
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  // Destroyed, not ended: an ended socket keeps its descriptor until the client closes its side,
  // which a silent client never does.
  server.setTimeout(idleTimeoutMs, (socket) => socket.destroy());
  server.on("clientError", answerClientError);
  // CONNECT never reaches the request listener: Node hands over the socket, for a proxy.
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => answerOnSocket(socket, 501, "Method CONNECT is not supported"));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_PORT, options.hostname ?? DEFAULT_HOSTNAME, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;

  return {
    server,
    url: serverUrl(address.address, address.port),
    close(timeoutMs = 10_000) {
      closing = true;
      let stopWaiting!: () => void;
      const handled = new Promise<void>((resolve) => {
        stopWaiting = resolve;
        if (running === 0) resolve();
        else whenNoneRunning.add(resolve);
      });
      return new Promise((resolve) => {
        // Past the timeout, connections are cut and handlers still running are no longer waited for.
        const force = setTimeout(() => {
          server.closeAllConnections();
          stopWaiting();
        }, timeoutMs);
        server.close(() => {
          void handled.then(() => {
            clearTimeout(force);
            resolve();
          });
        });
        server.closeIdleConnections();
      });
    },
  };
}

/**
 * Requests Node's HTTP parser refuses never reach the handler; they still get the API's
 * `{"message"}` body instead of Node's empty one.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] =
    error.code === "HPE_HEADER_OVERFLOW" ? [431, "Request headers are too large"]
    : error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? [408, "The request took too long to arrive"]
    : error.code === "HPE_INVALID_METHOD" && FETCH_FORBIDDEN_METHODS.has(requestMethod(error)) ? [501, `Method ${requestMethod(error)} is not supported`]
    : [400, "Malformed HTTP request"];
  answerOnSocket(socket, status, message);
}

/** The method of a request Node's parser refused (TRACK is not one it knows), from its first bytes. */
function requestMethod(error: Error & { rawPacket?: Buffer }): string {
  return error.rawPacket?.toString("latin1", 0, 16).split(" ", 1)[0] ?? "";
}

/** An answer written straight to a socket that is then closed. */
function answerOnSocket(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ message });
  // Destroyed once the answer is out: ended only, the socket would stay open (and keep its
  // descriptor) for as long as the client keeps its side open.
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

export interface ListenerHooks {
  onError?: (error: unknown) => void;
  beforeRespond?: (res: ServerResponse) => void;
  afterRespond?: () => void;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * A node:http request listener that runs a handler; for mounting in an existing server.
 * A handler with an `answer` method - what `createSubmissionsHandler` returns - is given the
 * request as plain values read from Node's, and its plain answer is written as it is: no
 * `Request`, `Response` or web stream is made, which in Node cost more than the rest of most
 * answers. Any other Fetch handler, including one of your own that wraps formsink's, gets a
 * real `Request` and its `Response` is written: the same answers, at that cost. A wrapper that
 * wants the direct path gives itself an `answer` that calls formsink's.
 */
export function createRequestListener(handler: NodeHandler, hooks: ListenerHooks = {}): RequestListener {
  const onError = hooks.onError ?? reportError;
  const { beforeRespond, afterRespond } = hooks;
  const answering = typeof handler.answer === "function" ? handler.answer.bind(handler) : undefined;
  let consumedBodyReported = false;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (afterRespond) res.once("finish", afterRespond);
    const target = requestTarget(req);
    let answer: Answer | Response;
    if (!("url" in target)) {
      answer = target;
    } else {
      const readBefore = bodyAlreadyRead(req);
      if (readBefore && !consumedBodyReported) {
        consumedBodyReported = true;
        onError(consumedBodyError(req));
      }
      // The socket's peer: the client, or the nearest proxy (see the `clientAddress` option).
      const connection = { clientAddress: req.socket.remoteAddress };
      // formsink's handler answers a body read before it (bodyReadByHost) as every other answer,
      // with its request id and CORS headers; a Fetch Request would wait for a body that never
      // comes, so any other handler's request gets the same answer from here.
      if (readBefore && !answering) {
        answer = toErrorAnswer(bodyReadByHost());
      } else {
        try {
          answer = answering
            ? await answering(apiRequest(req, target), connection)
            : await handler(fetchRequest(req, res, target), connection);
        } catch (error) {
          onError(error);
          answer = jsonError(500, INTERNAL_ERROR_MESSAGE);
        }
      }
    }
    // A body still arriving when the answer goes out is drained, up to a limit (most requests
    // have been read whole by now, and need no listener).
    if (!req.complete) {
      res.once("finish", () => {
        if (!req.complete) closePastDrainLimit(req);
      });
    }
    beforeRespond?.(res);
    // Not `instanceof Response`: reading that global loads Node's fetch (undici), time and
    // memory a server that answers with plain answers never needs.
    await (isResponse(answer) ? writeResponse(answer, res) : writeAnswer(answer, res)).catch((error) => {
      onError(error);
      res.destroy();
    });
  };
}

/**
 * The most of a body left unread by the answer (a 413, a 401) that is read and dropped so that
 * the connection serves the client's next request; past it, the connection is closed, so that
 * an endless upload cannot keep the server reading.
 */
const MAX_DRAINED_BYTES = 16 * 1024 * 1024;

function closePastDrainLimit(req: IncomingMessage): void {
  let drained = 0;
  const count = (chunk: Buffer) => {
    drained += chunk.byteLength;
    if (drained > MAX_DRAINED_BYTES) req.socket.destroy();
  };
  req.on("data", count);
  req.once("end", () => req.off("data", count));
}

/** The API's error shape, for the few answers the adapter gives itself. */
function jsonError(status: number, message: string): Answer {
  return { status, headers: { "content-type": "application/json" }, body: JSON.stringify({ message }) };
}

// A Host header is client input: only a plain host[:port] goes into the URL, so a request
// cannot make the handler see another origin through `Host: evil/..` tricks.
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;
// Methods the Fetch API refuses to put in a Request (they would throw in its constructor).
const FETCH_FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);
const ABSOLUTE_FORM = /^https?:\/\//i;

function plainHost(value: string | undefined): string | undefined {
  const match = value === undefined ? null : PLAIN_HOST.exec(value);
  return match && (match[1] === undefined || Number(match[1]) <= 65535) ? value : undefined;
}

/** Method and URL of a Node request, or the answer when Fetch cannot carry it. */
function requestTarget(req: IncomingMessage): RequestTarget | Answer {
  const method = req.method ?? "GET";
  if (FETCH_FORBIDDEN_METHODS.has(method)) return jsonError(501, `Method ${method} is not supported`);
  let target = originalUrl(req);
  let host = plainHost(req.headers.host);
  if (ABSOLUTE_FORM.test(target)) {
    // Absolute form (`GET http://host/path`): its authority replaces Host (RFC 9112, 3.2.2).
    const url = URL.canParse(target) ? new URL(target) : undefined;
    if (!url) return jsonError(400, "The request target is not a valid URL");
    host = plainHost(url.host);
    target = url.pathname + url.search;
  }
  const plain = plainTarget(method, host ?? "localhost", target);
  if (plain !== undefined) return plain;
  try {
    return { method, url: new URL(`http://${host ?? "localhost"}${target.startsWith("/") ? target : `/${target}`}`).href, plainPath: undefined };
  } catch {
    return jsonError(400, "The request target is not a valid URL");
  }
}

/**
 * A path (and query) that the URL parser leaves as it is: no dot segments (no `.` or `%` in the
 * path), no backslash, nothing it percent-encodes (spaces, quotes, `<`, `>`, `` ` ``, braces,
 * `#`, control and non-ASCII characters; `'` in a query).
 */
const PLAIN_TARGET = new RegExp(`^/[${PLAIN_PATH_CHARACTERS}]*(?:\\?[A-Za-z0-9_~!$&()*+,;=:@\\/?.%-]*)?$`);

// bench/http.ts (every route): the URL parser's work for a path that needs none of it, and for
// the same Host header again and again, was a noticeable part of the adapter's cost; and the
// handler checking the path again, once the adapter had, a part of the rest.
/**
 * The request's URL, as `new URL` writes it, without parsing it, when its target is a
 * PLAIN_TARGET: the host's origin (`parsedOrigin`, parsed once per host) and the target as it
 * is; a target without a query is also the path the handler routes on. Undefined for any
 * other target.
 */
function plainTarget(method: string, host: string, target: string): RequestTarget | undefined {
  if (!PLAIN_TARGET.test(target)) return undefined;
  const origin = parsedOrigin("http", host);
  if (origin === undefined) return undefined;
  return { method, url: origin + target, plainPath: target.includes("?") ? undefined : target };
}

/** A plain answer, written as it is: a body known in full goes out with its length, in one write. */
async function writeAnswer(answer: Answer, res: ServerResponse): Promise<void> {
  const { status, headers, body } = answer;
  if (typeof body === "string") {
    headers["content-length"] = String(Buffer.byteLength(body));
    res.writeHead(status, headers).end(body);
  } else if (body instanceof Uint8Array) {
    headers["content-length"] = String(body.byteLength);
    res.writeHead(status, headers).end(body);
  } else {
    res.writeHead(status, headers);
    if (body === null) res.end();
    else await writeStream(body, res);
  }
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (response.body === null) res.end();
  else await writeStream(response.body, res);
}

async function writeStream(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  const reader = body.getReader();
  // A client that goes away stops the stream (and whatever query feeds it).
  const stop = () => void reader.cancel().catch(() => {});
  // A client gone before the answer: its "close" has passed, and a write would wait for a drain that never comes.
  if (res.destroyed) return stop();
  res.once("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drained(res);
      if (res.destroyed) return;
      await nextLoopTurn();
    }
    res.end();
  } finally {
    res.off("close", stop);
  }
}

/**
 * Lets the event loop take its other work (new connections, other requests, timers) between two
 * chunks. A write the socket takes at once (a reader as fast as the stream) ends in a callback
 * Node runs before the event loop's next turn, "drain" included, so without this a long stream
 * (an export) would hold the server until its last chunk.
 */
function nextLoopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

function isResponse(answer: Answer | Response): answer is Response {
  return typeof (answer as Partial<Response>).arrayBuffer === "function";
}
