/**
 * The Node, Bun and Deno webhook transport's HTTP/1.1: what it writes, how it reads a receiver's
 * answer, when it keeps a connection for the next delivery, and that https checks the
 * receiver's certificate. Against real servers (node:net, node:http, node:tls).
 */
import { once } from "node:events";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readAnswerHead, requestText } from "../../adapters/webhook-http.ts";
import { createWebhookTransport } from "../../adapters/webhook-transport.ts";
import { attemptError } from "../../src/webhooks/transport.ts";

const test = suite("webhooks: the transport's HTTP/1.1");

/** A self-signed certificate for receiver.test, which nothing trusts. */
const KEY = `-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDXJGHwpt7+tFzp
IVd9STBTT0940YuZ1ZmWuhTp/GctRy66O2zucc0GpEX85IkZ/iBq6jcpRtGbcsg0
Czoe46vI75Igs/cnzCEp+po/bOuNVh/g9J9T9+L0CIBdAJwSY1S16wWiOhFmzf3p
2Q8BB+3Bv8Lotk6A5f4LIHlLxg5VXZ324QOf9uWxXWjxe2y6iMsoUdW/ZG0CYsZM
cVCX0dYKa9mVL0LWgwxzjp09Py2cSaLt77/N5uM28PhOVxwbP9NjqZS/9gSvY2zd
DzUFxO5DSnZ/lT/+PVQSFt4RZGnMj6pk9DFdjjz8OW4kw6dEi+2dvGxeMY0B/zeS
uWERFB9JAgMBAAECggEAV5qK/vEUEGblBlD7TRrGQMYkuC+rRqLBfayb44NRiBBa
KJ8WBin0sGWn0ghFA36FOMPSXk5l/4RHnVmM+xL92j4jJInjdCMcxfkzYew6Jj0R
kgpJ7mkb0v67NiOPabVkwwbGLn6yo0fxwo0OHP9bgu9QsG27naUJQwKgIYiuQXe0
DlJD6z7NndeqPUu9lJDmB7UdsV8vx4aH7AlqNB8AOsTUSziFATGHqJgg1opsmX2O
WktU5P6QwGYHyDjaX8lV0fSdKSTU8/RF94heJRI/npQY2Pd2lkBp+whObEis4RUC
BkTgZZGWq+b2IkMqJTdXwOzghPM0wZ5g9O+DnV2D2QKBgQD1nBSBew+laCKCtgoW
j+QS9QEoX6vVw/GH8Bp8vKZ2QZfIWFW5ocBjkSmNEHhhjYHu4cJAlgUgBX8mr+Q3
2AAqmOaFMAa7fwnJB8TKzoN0PdPA39pBsGCfTNzJLBsYfYFjct8FUsIfW7wRIo+h
1Ihti2wv2x2CZZzps7Ne/m8IPwKBgQDgPlfCOvrGN8v72IAQJ1HUdKvRIdF7uWct
G2GlbiR7pRf+vegiaOcujXqsExzV9WU4/UrXG0y/Hc9KrkVvIB8pcQsrrBStvFHy
dan74cwSAW/2IvXXZcImfd79xU/UaOGe2BOwNfxAVuU3n1MoBsOBX6WBMyu9NM59
MM8rQcY2dwKBgGGQ+QxeiF6auWrXSbagvmdRcH5LUwV96wqnNL5samv7roHlpVgy
iyyCU9E3w7ps7jqo7/OcJLkNte72XGBaq+ZACwLJi0McOhTjwycVVl7s2Jt70UXa
/OcLL4Gyxai64pVQ4otIztiKJnFgG1KcDP4HLpjsIBLWrrifrBeGVzEdAoGAeBGJ
het0qTvpEgF7mKqlCyApe4IjG59LWoClySFvkXD1pyXiLMKEvo1smMRnFT0fJOOi
9gidEFwSyUcE0JqfdN4dgBXUwK3sJunPyZm+Xgm8/Er93YaT7W5KPxEuTGqYHChQ
anKNjZm5hA3gRbdRaW1gPgy7J8UlpyzCUMQYMMMCgYEAvHzBd4itmF+wXy3dM//b
33Ul8CNFmtNJs6P190bYVPUh5YV4idKjoNIvpUUKIwIoBbD4dhpOHk9tB41krv50
XCggplcEZiPZQP0+HzRTIItwUbqBJhim2A2pFVJ0/cimIL4FInbl4T6CBKve2AJf
Shlzqqd4lc5yne1Yx73SMYU=
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIDLTCCAhWgAwIBAgIUF3SjsiHzCtopnLdug57ksDUv33EwDQYJKoZIhvcNAQEL
BQAwGDEWMBQGA1UEAwwNcmVjZWl2ZXIudGVzdDAgFw0yNjExMjMyMjM0MzlaGA8y
MTI2MTAzMDIyMzQzOVowGDEWMBQGA1UEAwwNcmVjZWl2ZXIudGVzdDCCASIwDQYJ
KoZIhvcNAQEBBQADggEPADCCAQoCggEBANckYfCm3v60XOkhV31JMFNPT3jRi5nV
mZa6FOn8Zy1HLro7bO5xzQakRfzkiRn+IGrqNylG0ZtyyDQLOh7jq8jvkiCz9yfM
ISn6mj9s641WH+D0n1P34vQIgF0AnBJjVLXrBaI6EWbN/enZDwEH7cG/wui2ToDl
/gsgeUvGDlVdnfbhA5/25bFdaPF7bLqIyyhR1b9kbQJixkxxUJfR1gpr2ZUvQtaD
DHOOnT0/LZxJou3vv83m4zbw+E5XHBs/02OplL/2BK9jbN0PNQXE7kNKdn+VP/49
VBIW3hFkacyPqmT0MV2OPPw5biTDp0SL7Z28bF4xjQH/N5K5YREUH0kCAwEAAaNt
MGswHQYDVR0OBBYEFBZcYjAH4Mhm79CWLFlEZtjfr9Z4MB8GA1UdIwQYMBaAFBZc
YjAH4Mhm79CWLFlEZtjfr9Z4MA8GA1UdEwEB/wQFMAMBAf8wGAYDVR0RBBEwD4IN
cmVjZWl2ZXIudGVzdDANBgkqhkiG9w0BAQsFAAOCAQEAwo8ujs3RFg7OpvyEgl/u
9VRaB7IGAkuPOoADMxScUZ6wvZDfG4IiFvw+5BUihhQ35dWaE7fYMsY/CalBQzIr
fYzT0CaeU+XBQSGE+KIDNWUraAZbhjDmjqGshm8xithpuJh3tel3oaX8exBCLM/n
jXD2LjqR2McKi186fffbqTuEE/x26nqRHA9LtSZjx8bB5gTrUQoe2lngteSrODgw
eKWiUu1xXcqJVmoodcwWZpntKCV6KcGOCsva12qLHcGuwySKkK2UEwjmcVQelsNP
wmODSJiMlBVJSEKht8b+QepfGrxb3tIbZitJND/YqLa0C1rpDpUhffuFHOWX923H
9A==
-----END CERTIFICATE-----`;

const request = (url: string, body = `{"id":"evt_1"}`) => ({ url, headers: { "content-type": "application/json", "webhook-id": "evt_1" }, body, timeoutMs: 5000 });

/** A node:net server that answers every request with `answer`, and counts connections and requests. */
async function rawReceiver(answer: string): Promise<{ url: string; connections: number; requests: string[]; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { url: "", connections: 0, requests: [] as string[], close: async () => {} };
  const server: Server = createNetServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let pending = "";
    socket.on("data", (chunk) => {
      pending += chunk.toString("latin1");
      const end = pending.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(pending)?.[1]);
      if (end < 0 || pending.length < end + 4 + length) return;
      state.requests.push(pending.slice(0, end + 4 + length));
      pending = pending.slice(end + 4 + length);
      socket.write(answer);
    });
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks?to=crm`;
  state.close = async () => {
    for (const socket of sockets) socket.destroy();
    server.close();
    await once(server, "close");
  };
  return state;
}

test("a request is a POST of the URL's path and query with its host, the headers and the body's length in bytes", () => {
  const text = requestText(new URL("https://hooks.example.com:8443/in?to=crm"), { "webhook-id": "evt_1" }, `{"name":"Zoë"}`);
  assert.is(text, `POST /in?to=crm HTTP/1.1\r\nhost: hooks.example.com:8443\r\nwebhook-id: evt_1\r\ncontent-length: 15\r\n\r\n{"name":"Zoë"}`);
  assert.throws(() => requestText(new URL("https://hooks.example.com/"), { "x-a": "1\r\nx-b: 2" }, ""), /line break/);
});

test("an answer's head: read once whole, interim answers passed over, and reusable only with a known end and no close", () => {
  assert.is(readAnswerHead("HTTP/1.1 204 No Content\r\n"), undefined, "not whole yet");
  assert.equal(readAnswerHead("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"), { status: 204, reusable: true, bodyLength: 0, rest: 0 });
  assert.equal(readAnswerHead("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), { status: 200, reusable: true, bodyLength: 2, rest: 2 });
  assert.is(readAnswerHead("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")!.reusable, false, "chunked");
  assert.is(readAnswerHead("HTTP/1.1 200 OK\r\n\r\nuntil the end")!.reusable, false, "no length: the body ends with the connection");
  assert.is(readAnswerHead("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")!.reusable, false, "closed");
  assert.is(readAnswerHead("HTTP/1.0 204 No Content\r\n\r\n")!.reusable, false, "HTTP/1.0 without keep-alive");
  assert.is(readAnswerHead("HTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n")!.reusable, true);
  assert.throws(() => readAnswerHead("SSH-2.0-OpenSSH_9.6\r\n\r\n"), /not HTTP/);
  assert.throws(() => readAnswerHead("HTTP/1.1 200 OK\r\n" + "x-padding: x\r\n".repeat(6000)), /too long a head/);
});

test("one connection carries delivery after delivery when the answers allow it; the receiver gets each request whole", async () => {
  const receiver = await rawReceiver("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  const transport = createWebhookTransport({ allowPrivate: true });
  try {
    for (let i = 0; i < 3; i++) assert.equal(await transport(request(receiver.url, `{"n":${i}}`)), { status: 200 });
    assert.is(receiver.connections, 1);
    assert.equal(receiver.requests.map((text) => text.split("\r\n")[0]), Array(3).fill("POST /hooks?to=crm HTTP/1.1"));
    assert.ok(receiver.requests[2]!.endsWith(`\r\n\r\n{"n":2}`));
  } finally {
    transport.close();
    await receiver.close();
  }
});

test("an answer that ends with its connection, or asks to close it, is read for its status and the next delivery opens a new one", async () => {
  for (const answer of ["HTTP/1.1 202 Accepted\r\nconnection: close\r\n\r\n", "HTTP/1.1 202 Accepted\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"]) {
    const receiver = await rawReceiver(answer);
    const transport = createWebhookTransport({ allowPrivate: true });
    try {
      assert.equal(await transport(request(receiver.url)), { status: 202 });
      assert.equal(await transport(request(receiver.url)), { status: 202 });
      assert.is(receiver.connections, 2, answer);
    } finally {
      transport.close();
      await receiver.close();
    }
  }
});

test("a node:http receiver that closes idle connections: the next delivery after it did gets through on a new one", async () => {
  const server = createHttpServer((incoming, response) => incoming.resume().on("end", () => response.writeHead(204).end()));
  server.keepAliveTimeout = 50;
  const closed: Promise<unknown>[] = [];
  server.on("connection", (socket: Socket) => closed.push(once(socket, "close")));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const transport = createWebhookTransport({ allowPrivate: true });
  try {
    assert.equal(await transport(request(url)), { status: 204 });
    await Promise.all(closed);
    // The hang-up reaches the transport's end of the connection on a later turn.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await transport(request(url)), { status: 204 });
    assert.is(closed.length, 2, "a new connection");
  } finally {
    transport.close();
    server.closeAllConnections();
    server.close();
  }
});

test("an answer that is not HTTP, and a receiver that hangs up, are failed attempts with a reason", async () => {
  const garbage = await rawReceiver("SSH-2.0-OpenSSH_9.6\r\n\r\n");
  const transport = createWebhookTransport({ allowPrivate: true });
  try {
    const error = await transport(request(garbage.url)).then(() => undefined, (thrown: unknown) => thrown);
    assert.is(attemptError(error, 5000), "could not reach the receiver: the receiver's answer is not HTTP/1.1");
  } finally {
    await garbage.close();
  }
  const hangUp = createNetServer((socket) => socket.once("data", () => socket.destroy()));
  hangUp.listen(0, "127.0.0.1");
  await once(hangUp, "listening");
  try {
    const error = await transport(request(`http://127.0.0.1:${(hangUp.address() as AddressInfo).port}/`)).then(() => undefined, (thrown: unknown) => thrown);
    assert.is(attemptError(error, 5000), "could not reach the receiver: ECONNRESET");
  } finally {
    transport.close();
    hangUp.close();
  }
});

test("https checks the receiver's certificate: one nobody vouches for is refused", async () => {
  const server = createTlsServer({ key: KEY, cert: CERT }, (socket) => socket.on("data", () => socket.end("HTTP/1.1 204 No Content\r\n\r\n")));
  server.on("tlsClientError", () => {});
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const transport = createWebhookTransport({ resolve: async () => [{ address: "127.0.0.1", family: 4 }], allowPrivate: true });
  try {
    const error = await transport(request(`https://receiver.test:${(server.address() as AddressInfo).port}/`)).then(() => undefined, (thrown: unknown) => thrown);
    assert.match(attemptError(error, 5000), /^could not reach the receiver: (DEPTH_ZERO_SELF_SIGNED_CERT|.*self[- ]signed)/i);
  } finally {
    transport.close();
    server.close();
  }
});

test.run();
