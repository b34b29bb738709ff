/**
 * Node adapter: serves any Fetch handler on node:http, with streamed request and response
 * bodies, keep-alive, and a graceful close that lets in-flight requests finish.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import { type Duplex, finished } from "node:stream";
import { INTERNAL_ERROR_MESSAGE } from "../src/http/errors.ts";
import {
  DEFAULT_HOSTNAME, DEFAULT_PORT, type FetchHandler, reportError, type RunningServer, type ServeOptions, serverUrl,
} from "./server.ts";

export type { ConnectionInfo, FetchHandler, RunningServer, ServeOptions } from "./server.ts";

export interface NodeServer extends RunningServer {
  server: Server;
}

export async function serve(handler: FetchHandler, options: ServeOptions = {}): Promise<NodeServer> {
  let closing = false;
  const listener = createRequestListener(handler, {
    onError: options.onError,
    // Once closing, answers ask the client to drop the connection, and the connection is
    // closed as soon as it is idle.
    beforeRespond: (res) => {
      if (closing) res.setHeader("connection", "close");
    },
    afterRespond: () => {
      if (closing) server.closeIdleConnections();
    },
  });
  const server = createServer(listener);
  server.on("clientError", answerClientError);
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
      return new Promise((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
        server.close(() => {
          clearTimeout(force);
          resolve();
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
    : [400, "Malformed HTTP request"];
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export interface ListenerHooks {
  onError?: (error: unknown) => void;
  beforeRespond?: (res: ServerResponse) => void;
  afterRespond?: () => void;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** A node:http request listener that runs a Fetch handler; for mounting in an existing server. */
export function createRequestListener(handler: FetchHandler, hooks: ListenerHooks = {}): RequestListener {
  const onError = hooks.onError ?? reportError;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.once("finish", () => hooks.afterRespond?.());
    let response: Response;
    const request = toRequest(req, res);
    if (request instanceof Response) {
      response = request;
    } else {
      try {
        // The socket's peer: the client, or the nearest proxy (see the `clientAddress` option).
        response = await handler(request, { clientAddress: req.socket.remoteAddress });
      } catch (error) {
        onError(error);
        response = jsonError(500, INTERNAL_ERROR_MESSAGE);
      }
    }
    hooks.beforeRespond?.(res);
    await writeResponse(response, res).catch((error) => {
      onError(error);
      res.destroy();
    });
  };
}

/** The API's error shape, for the few answers the adapter gives itself. */
function jsonError(status: number, message: string): Response {
  const body = JSON.stringify({ message });
  return new Response(body, {
    status,
    headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
  });
}

// A Host header is client input: only a plain host[:port] goes into the URL, so a request
// cannot make the handler see another origin through `Host: evil/..` tricks.
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/;
// Methods the Fetch API refuses to put in a Request (they would throw in its constructor).
const FETCH_FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

function plainHost(value: string | undefined): string | undefined {
  const match = value === undefined ? null : PLAIN_HOST.exec(value);
  return match && (match[1] === undefined || Number(match[1]) <= 65535) ? value : undefined;
}

/**
 * The Fetch request for a Node request, or the answer when it cannot be one (a method Fetch
 * forbids). No AbortSignal is attached: undici's signal bookkeeping halves throughput and adds
 * millisecond pauses (bench/node-bridge.ts); a client that goes away still stops the work that
 * matters, as the response stream is cancelled in writeResponse.
 */
function toRequest(req: IncomingMessage, res: ServerResponse): Request | Response {
  const method = req.method ?? "GET";
  if (FETCH_FORBIDDEN_METHODS.has(method)) return jsonError(501, `Method ${method} is not supported`);
  let target = req.url ?? "/";
  let host = plainHost(req.headers.host);
  if (/^https?:\/\//i.test(target)) {
    // Absolute form (`GET http://host/path`): its authority replaces Host (RFC 9112, 3.2.2).
    const url = URL.canParse(target) ? new URL(target) : undefined;
    if (!url) return jsonError(400, "The request target is not a valid URL");
    host = plainHost(url.host);
    target = url.pathname + url.search;
  }
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(`http://${host ?? "localhost"}${target.startsWith("/") ? target : `/${target}`}`, {
    method,
    headers,
    body: hasBody ? requestBody(req, res) : null,
    // Required by the Fetch spec for a streamed request body.
    duplex: "half",
  } as RequestInit);
}

/**
 * The request body as a web stream that reads from the socket only when the handler reads.
 * Not `Readable.toWeb(req)`: that reads ahead, so a body the handler never reads (a 401, or a
 * 413 for a declared length) stalls the keep-alive connection, and cancelling it destroys the
 * request, which leaves the connection unusable after the answer (a 413 mid-stream). Here,
 * whatever the handler leaves unread - it cancelled, or it answered - is read and dropped, so
 * the answer reaches the client and the connection serves the next request.
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

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  // A client that goes away stops the stream (and whatever query feeds it).
  const stop = () => void reader.cancel().catch(() => {});
  res.once("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drained(res);
      if (res.destroyed) return;
    }
    res.end();
  } finally {
    res.off("close", stop);
  }
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
