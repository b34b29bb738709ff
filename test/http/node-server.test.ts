/**
 * The HTTP contract against the Node adapter over a real socket, plus what only a real server
 * has: streamed bodies, keep-alive connections and a graceful close.
 */
import { spawn } from "node:child_process";
import { Agent, createServer, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest, type RequestOptions } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { CONSUMED_BODY_MESSAGE } from "../../src/http/errors.ts";
import { createRequestListener, createWebhookTransport, type NodeHandler, serve } from "../../adapters/node.ts";
import { createApiKey } from "../../src/auth/keys.ts";
import { createSubmissionsHandler, type SubmissionsHandler } from "../../src/handler.ts";
import type { ApiRequest } from "../../src/http/request.ts";
import type { ConnectionInfo } from "../../src/rate-limit/client-address.ts";
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { createMemoryStore } from "../../src/stores/memory.ts";
import { overSocket } from "./over-socket.ts";
import { type FetchHandler, httpSuite } from "./suite.ts";
import { webhookDeliverySuite } from "./webhook-delivery-suite.ts";
import { roomInWindow } from "../support/rate-window.ts";
import { within } from "../support/within.ts";
import { gatedHandler, gracefulCloseSuite } from "./close-suite.ts";

httpSuite("node server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
webhookDeliverySuite("node server, libSQL :memory:", overSocket(serve), () => createLibsqlStore({ url: ":memory:" }), createWebhookTransport);

// ---- Node adapter specifics -----------------------------------------------------------------

const t = suite("node server: adapter");

interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  reusedSocket: boolean;
  /**
   * The connection the request went over. Same object, same connection: an agent reuses its
   * sockets. (The server's count of accepted connections would also count a stranger's, such
   * as another test's leftover client reaching a reused port number.)
   */
  socket: Socket;
}

/** One request with node:http (so the test controls the connection and the body framing). */
function rawRequest(url: string, options: RequestOptions, body?: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, options, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, reusedSocket: req.reusedSocket, socket: req.socket! }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function keyedServer(handler?: (inner: FetchHandler) => FetchHandler) {
  const store = createMemoryStore();
  const { key } = await createApiKey(store, { account: "node-adapter" });
  const inner = createSubmissionsHandler(store);
  const server = await serve(handler ? handler(inner) : inner, { port: 0 });
  return { store, key, server };
}

// formsink's handler as it is (run without Fetch objects) and wrapped in another (a real Request)
for (const [bridge, wrap] of [["formsink's own handler", undefined], ["a wrapping handler", (inner: FetchHandler): FetchHandler => (request) => inner(request)]] as const) {
  t(`a streamed body over 64 KiB gets a 413 the client receives, while it is still sending (${bridge})`, async () => {
    const seen: { contentLength: string | undefined; transferEncoding: string | undefined }[] = [];
    const { key, server, store } = await keyedServer(wrap);
    // The server closes a keep-alive connection idle for 5 s, and on a loaded machine this test has
    // failed by that timer (Node's socketOnTimeout) between the 413 and the next request. The test
    // is about the 413 leaving the connection usable, not about the timeout.
    server.server.keepAliveTimeout = 60_000;
    // Who ends the upload's connection first, if anyone does before the next request: the server
    // (it must not) or the client (Node's agent may open a new connection for its own reasons).
    let firstToClose: string | undefined;
    server.server.on("request", (req: IncomingMessage) => {
      if (req.method !== "POST") return;
      seen.push({ contentLength: req.headers["content-length"], transferEncoding: req.headers["transfer-encoding"] });
      const socket = req.socket;
      socket.once("end", () => (firstToClose ??= "the client (FIN)"));
      socket.once("error", (error) => (firstToClose ??= `the client (${error.message})`));
      for (const method of ["destroy", "end"] as const) {
        const original = socket[method].bind(socket) as (...args: unknown[]) => Socket;
        socket[method] = ((...args: unknown[]) => {
          firstToClose ??= `the server (socket.${method}: ${new Error().stack?.split("\n").slice(2, 5).join(" < ")})`;
          return original(...args);
        }) as never;
      }
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const cap = 8 * 1024 * 1024;
      const chunk = "x".repeat(16 * 1024);
      const result = await within(
        new Promise<{ status: number; body: string; sentBeforeAnswer: number; socket: Socket }>((resolve, reject) => {
          let sent = 0;
          let answered = false;
          const req = httpRequest(`${server.url}/api/submission`, {
            agent,
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": key },
          });
          req.on("error", reject);
          req.on("response", (res) => {
            answered = true;
            const sentBeforeAnswer = sent;
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (part: string) => (text += part));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, sentBeforeAnswer, socket: req.socket! }));
            res.on("error", reject);
          });
          const pump = async () => {
            req.write('{"popupId":"p","data":{"text":"');
            while (!answered && sent < cap && !req.destroyed) {
              sent += chunk.length;
              if (!req.write(chunk)) await new Promise((drained) => req.once("drain", drained));
              await new Promise((next) => setImmediate(next));
            }
            req.end(answered ? undefined : '"}}');
          };
          pump().catch(reject);
        }),
        20_000,
        "the streamed upload",
      );
      assert.equal(seen, [{ contentLength: undefined, transferEncoding: "chunked" }], "the body was sent chunked");
      assert.is(result.status, 413, result.body);
      assert.equal(Object.keys(JSON.parse(result.body)), ["message"]);
      assert.ok(result.sentBeforeAnswer < cap, "the answer came while the body was still streaming");

      // the connection stays usable, and nothing was stored
      const list = await within(rawRequest(`${server.url}/api/submission`, { agent, headers: { "x-api-key": key } }), 10_000, "the next request");
      assert.is(list.status, 200);
      assert.is((JSON.parse(list.body) as { total: number }).total, 0);
      // The server keeps the connection: the next request goes over it, unless the client closed it.
      // (A request queued on the busy socket does not count as `reusedSocket`; the socket is what tells.)
      if (list.socket !== result.socket) {
        assert.ok(firstToClose?.startsWith("the client"), `the upload's connection was closed first by ${firstToClose ?? "nobody"}`);
      }
    } finally {
      agent.destroy();
      await within(server.close(), 15_000, "close()");
      await store.close();
    }
  });

  t(`keep-alive: several requests reuse one connection (${bridge})`, async () => {
    const { key, server, store } = await keyedServer(wrap);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const headers = { "x-api-key": key };
      const replies: RawReply[] = [];
      replies.push(await rawRequest(`${server.url}/api/submission`, { agent, headers }));
      replies.push(
        await rawRequest(
          `${server.url}/api/submission`,
          { agent, method: "POST", headers: { ...headers, "content-type": "application/json" } },
          JSON.stringify({ popupId: "p", data: { a: 1 } }),
        ),
      );
      // an error answer (body left unread by the handler) keeps the connection usable too
      replies.push(
        await rawRequest(
          `${server.url}/api/submission/${"0".repeat(8)}-0000-7000-8000-${"0".repeat(12)}`,
          { agent, method: "PATCH", headers: { ...headers, "content-type": "application/json" } },
          '{"status":"completed"}',
        ),
      );
      // so does a 413 for a declared length, sent before the handler read any of the body
      replies.push(
        await rawRequest(
          `${server.url}/api/submission`,
          { agent, method: "POST", headers: { ...headers, "content-type": "application/json" } },
          JSON.stringify({ popupId: "p", data: { text: "x".repeat(300 * 1024) } }),
        ),
      );
      // and a 401, the body never read
      replies.push(
        await rawRequest(
          `${server.url}/api/submission`,
          { agent, method: "POST", headers: { "content-type": "application/json" } },
          JSON.stringify({ popupId: "p", data: { text: "x".repeat(32 * 1024) } }),
        ),
      );
      replies.push(await rawRequest(`${server.url}/api/submission`, { agent, headers }));
      assert.equal(replies.map((reply) => reply.status), [200, 201, 404, 413, 401, 200]);
      assert.equal(replies.map((reply) => reply.reusedSocket), [false, true, true, true, true, true]);
      assert.is(new Set(replies.map((reply) => reply.socket)).size, 1, "one connection");
      assert.is((JSON.parse(replies[5]!.body) as { total: number }).total, 1);
    } finally {
      agent.destroy();
      await within(server.close(), 15_000, "close()");
      await store.close();
    }
  });
}

t("a body a host app read before formsink's handler (a body parser) gets a 500 at once, not a hang", async () => {
  const store = createMemoryStore();
  const { key } = await createApiKey(store, { account: "node-adapter" });
  const reported: unknown[] = [];
  const forms = createRequestListener(createSubmissionsHandler(store), { onError: (error) => reported.push(error) });
  const server = createServer((req, res) => {
    req.resume();
    req.once("end", () => void forms(req, res));
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  try {
    const { port } = server.address() as AddressInfo;
    const reply = await within(
      fetch(`http://127.0.0.1:${port}/api/submission`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ popupId: "p", data: {} }),
      }),
      10_000,
      "the answer",
    );
    assert.is(reply.status, 500);
    assert.equal(await reply.json(), { message: CONSUMED_BODY_MESSAGE });
    assert.is(reported.length, 1);
    assert.match((reported[0] as Error).message, /was read before formsink got it/);
  } finally {
    server.close();
    await store.close();
  }
});

t("keep-alive: a handler that answers before reading the whole body leaves the connection usable", async () => {
  // reads one chunk of the body, then answers without reading on or cancelling
  const server = await serve(
    async (request) => {
      if (request.body) await request.body.getReader().read();
      return new Response("early", { status: 400 });
    },
    { port: 0 },
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const early = await within(
      rawRequest(`${server.url}/upload`, { agent, method: "POST", headers: { "content-type": "text/plain" } }, "y".repeat(512 * 1024)),
      10_000,
      "the early answer",
    );
    assert.is(early.status, 400);
    const next = await within(rawRequest(`${server.url}/upload`, { agent, method: "POST" }, "z"), 10_000, "the next request");
    assert.is(next.status, 400);
    assert.is(next.body, "early");
    assert.ok(next.socket === early.socket, "the next request went over the same connection");
  } finally {
    agent.destroy();
    await within(server.close(), 15_000, "close()");
  }
});

t("a long streamed answer (an export) lets the server take its other work between chunks", async () => {
  // A reader in another process keeps up with the stream, so the socket takes each chunk at
  // once: the server must still reach its timers (and its other connections) before the end.
  const CHUNKS = 150;
  let pulls = 0;
  let pullsWhenTimerRan = -1;
  const server = await serve(
    async () => {
      setTimeout(() => (pullsWhenTimerRan = pulls), 0);
      return new Response(new ReadableStream<Uint8Array>({
        pull(controller) {
          pulls++;
          // a page's read from the database: the time that lets the reader keep up
          const until = performance.now() + 2;
          while (performance.now() < until);
          if (pulls > CHUNKS) controller.close();
          else controller.enqueue(new Uint8Array(256 * 1024).fill(120));
        },
      }));
    },
    { port: 0 },
  );
  const reader = spawn(process.execPath, ["-e", `fetch(${JSON.stringify(`${server.url}/export`)}).then((r) => r.arrayBuffer()).then((b) => process.stdout.write(String(b.byteLength)))`], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    let read = "";
    reader.stdout.setEncoding("utf8").on("data", (text: string) => (read += text));
    await within(new Promise((resolve) => reader.once("exit", resolve)), 30_000, "the reader's exit");
    assert.is(read.trim(), String(CHUNKS * 256 * 1024), "the reader got the whole stream");
    assert.ok(pullsWhenTimerRan >= 0 && pullsWhenTimerRan < CHUNKS / 2, `a timer set as the stream began ran after ${pullsWhenTimerRan} of ${CHUNKS} chunks`);
  } finally {
    reader.kill();
    await within(server.close(), 15_000, "close()");
  }
});

t("close() with only idle keep-alive connections resolves without waiting for them", async () => {
  const server = await serve(async () => new Response("ok"), { port: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  try {
    const replies = await Promise.all([1, 2, 3].map(() => rawRequest(`${server.url}/`, { agent })));
    assert.equal(replies.map((reply) => reply.status), [200, 200, 200]);
    // a force timeout far beyond the guard: only closing the idle connections can make it in time
    await within(server.close(120_000), 5_000, "close()");
    assert.not.ok(server.server.listening);
  } finally {
    agent.destroy();
  }
});

t("graceful close: an in-flight request finishes, new connections are refused, close() resolves", async () => {
  let entered!: () => void;
  const inFlight = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server = await serve(
    async (request) => {
      if (new URL(request.url).pathname === "/slow") {
        entered();
        await gate;
        return new Response("finished", { status: 200 });
      }
      return new Response("quick", { status: 200 });
    },
    { port: 0 },
  );
  const port = Number(new URL(server.url).port);
  const agent = new Agent({ keepAlive: true });
  try {
    // an idle keep-alive connection, which close() must not wait for
    const idle = await rawRequest(`${server.url}/quick`, { agent });
    assert.is(idle.status, 200);

    const slow = rawRequest(`${server.url}/slow`, {});
    await within(inFlight, 5_000, "the slow request reaching the handler");

    // a timeout far beyond the guard below: close() must resolve on its own, not by force
    let closed = false;
    const closing = server.close(120_000).then(() => {
      closed = true;
    });

    const refused = await within(
      new Promise<string>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve("connected");
        });
        socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
      }),
      5_000,
      "a new connection attempt",
    );
    assert.is(refused, "ECONNREFUSED");
    assert.not.ok(closed, "close() resolved while a request was in flight");

    release();
    const reply = await within(slow, 5_000, "the in-flight request");
    assert.is(reply.status, 200);
    assert.is(reply.body, "finished");
    assert.is(reply.headers.connection, "close");
    await within(closing, 5_000, "close()");
    assert.ok(closed);
  } finally {
    release();
    agent.destroy();
    await within(server.close(1_000).catch(() => {}), 5_000, "close() again");
  }
});

t("close() waits for the handler of a request whose client went away: what it writes is done before the caller closes the store", async () => {
  const { events, reached, release, handler } = gatedHandler();
  const server = await serve(handler, { port: 0 });
  const serverSideClosed = new Promise<void>((resolve) => server.server.once("connection", (socket: Socket) => socket.once("close", resolve)));
  try {
    const client = httpRequest(`${server.url}/`, { method: "POST" });
    client.on("error", () => {});
    client.end("{}");
    await within(reached, 5_000, "the request reaching the handler");
    client.destroy();
    await within(serverSideClosed, 5_000, "the server seeing the client go");

    const closing = server.close(120_000).then(() => events.push("closed"));
    // Turns enough for close() to resolve if it waited only for connections (it has none left).
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(events, [], "close() resolved while a handler was still running");
    release();
    await within(closing, 5_000, "close()");
    assert.equal(events, ["handler finished", "closed"]);
  } finally {
    release();
    await within(server.close(1_000).catch(() => {}), 5_000, "close() again");
  }
});

/**
 * Sends raw bytes on a fresh connection and resolves with everything the server sent back.
 * `ended`: the client ends its side with the bytes, and Node's server, which keeps no half-open
 * connection, then ends the connection, so only an answer given at once gets out; `open`: the
 * request says `Connection: close`, for an answer that waits (for a store, say).
 */
function rawExchange(url: string, bytes: string, clientSide: "ended" | "open" = "ended"): Promise<string> {
  const { hostname, port } = new URL(url);
  return within(
    new Promise<string>((resolve, reject) => {
      let received = "";
      const socket = connect(Number(port), hostname, () => (clientSide === "ended" ? socket.end(bytes) : socket.write(bytes)));
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => (received += chunk));
      socket.on("close", () => resolve(received));
      socket.on("error", reject);
    }),
    5_000,
    "a raw exchange",
  );
}

function parseRawReply(text: string): { status: number; contentType: string; body: unknown } {
  const [head = "", body = ""] = text.split("\r\n\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /^content-type: *(.*)$/im.exec(head)?.[1]?.trim() ?? "";
  return { status, contentType, body: JSON.parse(body) as unknown };
}

t("requests Fetch cannot carry or Node cannot parse get a JSON error, never a 500", async () => {
  const { server, store } = await keyedServer();
  try {
    const cases: [string, number, RegExp][] = [
      ["TRACE /api/submission HTTP/1.1\r\nHost: x\r\n\r\n", 501, /Method TRACE is not supported/],
      ["TRACK /api/submission HTTP/1.1\r\nHost: x\r\n\r\n", 501, /Method TRACK is not supported/],
      ["CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 501, /Method CONNECT is not supported/],
      ["GET /api/submission HTTP/1.1\r\nHost: x:99999\r\nConnection: close\r\n\r\n", 401, /^API key is required$/],
      ["GET /api/submission HTTP/1.1\r\nHost: evil/../x\r\nConnection: close\r\n\r\n", 401, /^API key is required$/],
      ["GET http://other.test/api/submission HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 401, /^API key is required$/],
      ["FOO /api/submission HTTP/1.1\r\nHost: x\r\n\r\n", 400, /^Malformed HTTP request$/],
      ["GET /api/submission HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, /^Malformed HTTP request$/],
      [`GET /api/submission HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 431, /^Request headers are too large$/],
    ];
    for (const [bytes, status, message] of cases) {
      const what = bytes.slice(0, 60);
      const reply = parseRawReply(await rawExchange(server.url, bytes));
      assert.is(reply.status, status, what);
      assert.match(reply.contentType, /^application\/json/, what);
      assert.match((reply.body as { message: string }).message, message, what);
    }
  } finally {
    await server.close();
    await store.close();
  }
});

t("the handler gets the socket's address as the client address, and rate limits count by it", async () => {
  const store = createMemoryStore();
  const site = await createApiKey(store, { account: "node-adapter", kind: "publishable", domains: ["shop.example.com"] });
  const inner = createSubmissionsHandler(store, { rateLimit: { publishable: { limit: 1, windowSeconds: 60 } } });
  const seen: (string | undefined)[] = [];
  const server = await serve((request, connection) => {
    seen.push(connection.clientAddress);
    return inner(request, connection);
  }, { port: 0 });
  try {
    const send = (forwardedFor: string) =>
      fetch(`${server.url}/api/submission`, {
        method: "POST",
        headers: {
          "x-api-key": site.key, origin: "https://shop.example.com", "content-type": "application/json", "x-forwarded-for": forwardedFor,
        },
        body: JSON.stringify({ popupId: "p", data: {} }),
      });
    await roomInWindow(60, 5_000);
    assert.is((await send("198.51.100.1")).status, 201);
    // another X-Forwarded-For is not another client: the socket's address is
    assert.is((await send("198.51.100.2")).status, 429);
    assert.equal(seen.length, 2);
    for (const address of seen) assert.match(address ?? "", /^(::ffff:)?127\.0\.0\.1$/);
  } finally {
    await server.close();
    await store.close();
  }
});

t("a plain request carries the URL and headers a Fetch Request would", async () => {
  const seen = (request: { url: string; headers: { get(name: string): string | null } }) => ({
    url: request.url,
    key: request.headers.get("X-Api-Key"),
    id: request.headers.get("x-request-id"),
    host: request.headers.get("host"),
    none: request.headers.get("x-none"),
  });
  const fetchOnly = async (request: Request) => Response.json(seen(request));
  const plainPaths: [string, string | undefined][] = [];
  const plain = Object.assign(fetchOnly, {
    answer: async (request: ApiRequest) => {
      plainPaths.push([request.url, request.plainPath]);
      return { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(seen(request)) };
    },
  });
  const servers = [await serve(plain, { port: 0 }), await serve(fetchOnly, { port: 0 })];
  try {
    const targets = [
      "/api/submission", "/api/submission?popupId=popup_1&status=pending", "/api/submission/0189f7a0-0000-7000-8000-000000000000",
      "/a/./b", "/a/../b", "/a/..", "/a/.?x=1", "/a/.../b", "/a/%2e%2E/b", "/a/%41", "//a", "/a?q=%zz&r='s'", "/a/{b}|c^d", "/A/B?X=Y",
      "/a?", "/a?b?c/d", "/a#frag", "/a\\b", "/a/b;c=d,e@f:g",
    ];
    const hosts = [
      "127.0.0.1:8080", "localhost", "Example.COM", "127.0.0.1:80", "127.1", "0x7f.0.0.1", "a--b.example", "xn--nxasmq6b.example",
      "example.com.", "[::1]:3000", "127.0.0.1:08080", "host-.example:65535", "256.0.0.1",
    ];
    for (const [target, host] of [...targets.map((target) => [target, "127.0.0.1:8080"]), ...hosts.map((host) => ["/api/submission?x=1", host])]) {
      const bytes = `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nX-API-KEY: one\r\nx-api-key: two\r\nX-Request-Id: r1\r\nConnection: close\r\n\r\n`;
      const [plainReply, fetchReply] = await Promise.all(servers.map(async (server) => parseRawReply(await rawExchange(server.url, bytes))));
      assert.equal(plainReply, fetchReply, `${target} on ${host}`);
      // 256.0.0.1 is no IPv4 address: a URL cannot hold it, and both answer 400.
      assert.is(plainReply!.status, host === "256.0.0.1" ? 400 : 200, `${target} on ${host}`);
    }
    assert.equal(
      parseRawReply(await rawExchange(servers[0]!.url, "GET /x HTTP/1.1\r\nHost: localhost\r\nx-api-key: one\r\nX-Api-Key: two\r\nConnection: close\r\n\r\n")).body,
      { url: "http://localhost/x", key: "one, two", id: null, host: "localhost", none: null },
    );
    // A path handed over is the URL's, as the parser has it, and comes only with no query or fragment.
    for (const [url, plainPath] of plainPaths) {
      if (plainPath === undefined) continue;
      const parsed = new URL(url);
      assert.equal([parsed.pathname, parsed.search, parsed.hash, url], [plainPath, "", "", parsed.origin + plainPath], url);
    }
    assert.equal(plainPaths.find(([url]) => url === "http://127.0.0.1:8080/api/submission"), ["http://127.0.0.1:8080/api/submission", "/api/submission"]);
  } finally {
    for (const server of servers) await server.close();
  }
});

t("formsink's handler routes a request target as the URL parser reads it, whether the adapter hands its path over or not", async () => {
  const store = createMemoryStore();
  const { key, record } = await createApiKey(store, { account: "node-adapter" });
  const id = "0189f7a0-0000-7000-8000-000000000000";
  await store.insertSubmission(record.accountId, {
    submissionId: id, popupId: "p", domain: "example.com", data: { email: "a@example.com" }, userAgent: "test", device: "desktop", status: "pending",
    createdAt: "2025-01-01T00:00:00.000Z",
  });
  const inner = createSubmissionsHandler(store);
  const handedOver: (string | undefined)[] = [];
  const direct = Object.assign((request: Request) => inner(request), {
    answer: (request: ApiRequest, connection?: ConnectionInfo) => {
      handedOver.push(request.plainPath);
      return inner.answer(request, connection);
    },
  });
  // The Fetch path never has a path handed over: the handler finds it in the URL.
  const servers = [await serve(direct, { port: 0 }), await serve((request: Request) => inner(request), { port: 0 })];
  try {
    const targets = [
      `/api/submission/${id}`, `/api/submission/${id}/`, `/api/submission/${id}?x=1`, `/api/submission/${id}#f`, `/api/submission/./${id}`,
      `/api/submission/x/../${id}`, `/api/submission/%2e/${id}`, `/api/submission/x/%2E%2e/${id}`, `/api/./submission/${id}`, `/api//submission/${id}`,
      `/api/submission/${id}/..`, `/api/submission/${id}/.`, `/API/submission/${id}`, `/api/submission/%30${id.slice(1)}`, `/api/submission/${id};x`,
      `/api/submission\\${id}`, "/api/submission", "/api/submission?", "/api/submission?limit=1", "/api/submission/export/..", "/api/health/",
      "/api/health/.", "/api/%68ealth", "/api/health?x",
    ];
    for (const target of targets) {
      const bytes = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`;
      const [plainReply, fetchReply] = await Promise.all(servers.map(async (server) => parseRawReply(await rawExchange(server.url, bytes, "open"))));
      assert.equal(plainReply, fetchReply, target);
    }
    const ordinary = parseRawReply(await rawExchange(servers[0]!.url, `GET /api/submission/${id} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`, "open"));
    assert.equal([ordinary.status, (ordinary.body as { submissionId: string }).submissionId], [200, id]);
    assert.is(handedOver.length, targets.length + 1);
    assert.ok(handedOver.includes(`/api/submission/${id}`), "an ordinary get's path is handed over");
  } finally {
    for (const server of servers) await server.close();
    await store.close();
  }
});

t("formsink's handler is run through its answer; one that wraps it gets a real Request, and the same answers", async () => {
  const given: { path: "answer" | "fetch"; isRequest: boolean }[] = [];
  // formsink's handler as it is, watched; and a host app's own handler around it, which may
  // change the Response it gets.
  const direct = (formsink: SubmissionsHandler) => Object.assign((request: Request, connection?: ConnectionInfo) => {
    given.push({ path: "fetch", isRequest: request instanceof Request });
    return formsink(request, connection);
  }, {
    answer: (request: ApiRequest, connection?: ConnectionInfo) => {
      given.push({ path: "answer", isRequest: request instanceof Request });
      return formsink.answer(request, connection);
    },
  });
  const wrapping = (formsink: SubmissionsHandler): NodeHandler => async (request, connection) => {
    given.push({ path: "fetch", isRequest: request instanceof Request });
    const response = await formsink(request, connection);
    const changed = new Response(response.body, response);
    changed.headers.set("x-wrapped", "yes");
    return changed;
  };
  const answers = [];
  for (const handlerOf of [direct, wrapping]) {
    const store = createMemoryStore();
    const { key } = await createApiKey(store, { account: "node-adapter" });
    const server = await serve(handlerOf(createSubmissionsHandler(store)), { port: 0 });
    try {
      const keyed = { "x-api-key": key, "content-type": "application/json" };
      const replies = [
        await fetch(`${server.url}/api/submission`, { method: "POST", headers: keyed, body: JSON.stringify({ popupId: "p", data: { email: "a@example.com" } }) }),
        await fetch(`${server.url}/api/submission?popupId=p`, { headers: keyed }),
        await fetch(`${server.url}/api/submission/${"0".repeat(8)}-0000-7000-8000-${"0".repeat(12)}`, { headers: keyed }),
        await fetch(`${server.url}/api/submission`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
        await fetch(`${server.url}/api/submission`, { method: "POST", headers: keyed, body: JSON.stringify({ popupId: "p", data: { a: "x".repeat(70_000) } }) }),
      ];
      answers.push(await Promise.all(replies.map(async (reply) => {
        const body = (await reply.json()) as Record<string, unknown>;
        // what differs between two stores: the new submission's id and time
        const { submissionId, createdAt, items, ...rest } = body;
        return { status: reply.status, body: rest, listed: Array.isArray(items) ? items.length : undefined, wrapped: reply.headers.get("x-wrapped") };
      })));
    } finally {
      await server.close();
      await store.close();
    }
  }
  const [throughAnswer, throughFetch] = answers;
  assert.equal(throughAnswer!.map((a) => a.status), [201, 200, 404, 401, 413]);
  assert.is(throughAnswer![1]!.listed, 1);
  assert.equal(throughFetch!.map((a) => ({ ...a, wrapped: null })), throughAnswer);
  assert.ok(throughFetch!.every((a) => a.wrapped === "yes"), "the wrapper's Response is what the client got");
  assert.equal(given, [
    ...Array(5).fill({ path: "answer", isRequest: false }),
    ...Array(5).fill({ path: "fetch", isRequest: true }),
  ]);
});

t.run();
gracefulCloseSuite("node server", serve);
