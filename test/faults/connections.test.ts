// Connections that misbehave: idle sockets past the open-file limit, an endless upload past the
// body limit, an upload the client abandons. The server recovers by itself and says nothing
// wrong about itself.
import { existsSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { create, newKey, serve, suiteWithDir } from "./support.ts";

const PRLIMIT = "/usr/bin/prlimit";
/** The server's open-file limit in the idle-socket test, and how many idle sockets exceed it. */
const OPEN_FILE_LIMIT = 256;
const IDLE_SOCKETS = 400;
/** Seconds: the server's idle timeout in these tests. */
const IDLE_TIMEOUT = 1;

const connections = suiteWithDir("misbehaving connections");

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves with what `check` gives once it stops throwing; rejects with its last error after `boundMs`. */
async function eventually<T>(check: () => Promise<T>, boundMs: number): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

connections("more silent connections than the server has file descriptors: it closes them and serves new clients within its idle timeout", async ({ dir }) => {
  assert.ok(existsSync(PRLIMIT), `${PRLIMIT} is missing: install util-linux (apt-get install util-linux)`);
  const db = `file:${join(dir, "live.db")}`;
  await newKey(db);
  const server = await serve(["--db", db, "--idle-timeout", String(IDLE_TIMEOUT)], {
    command: [PRLIMIT, `--nofile=${OPEN_FILE_LIMIT}:${OPEN_FILE_LIMIT}`, "--"],
  });
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < IDLE_SOCKETS; i++) {
      const socket = await open(server.url).catch(() => undefined);
      if (socket === undefined) continue;
      socket.on("error", () => {});
      sockets.push(socket);
    }
    assert.ok(sockets.length > OPEN_FILE_LIMIT, `only ${sockets.length} sockets connected`);
    // Served again once the idle ones are gone (bounded, so that a server that never recovers fails here).
    const health = await eventually(async () => {
      const answer = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(1000) });
      if (answer.status !== 200) throw new Error(`health answered ${answer.status}`);
      return answer;
    }, IDLE_TIMEOUT * 1000 + 5000);
    assert.is(health.status, 200);
    await eventually(async () => {
      const open = sockets.filter((socket) => !socket.closed).length;
      if (open > 0) throw new Error(`${open} idle sockets still open`);
    }, IDLE_TIMEOUT * 1000 + 5000);
  } finally {
    for (const socket of sockets) socket.destroy();
    await server.stop();
  }
});

connections("clients that trickle their headers (slowloris) up to --max-connections: each is answered 408 once its headers time out, and new clients are served again", async ({ dir }) => {
  const db = `file:${join(dir, "live.db")}`;
  await newKey(db);
  const cap = 20;
  // The headers' timeout is the idle timeout when shorter: 1 s here, each trickle within it.
  const server = await serve(["--db", db, "--idle-timeout", String(IDLE_TIMEOUT), "--max-connections", String(cap)]);
  const sockets: Socket[] = [];
  const answers: string[] = [];
  try {
    for (let i = 0; i < cap; i++) {
      const socket = await open(server.url);
      socket.on("error", () => {});
      socket.setEncoding("latin1");
      let received = "";
      socket.on("data", (text: string) => (received += text));
      socket.once("close", () => answers.push(received.split("\r\n")[0]!));
      socket.write("GET /api/health HTTP/1.1\r\nhost: x\r\n");
      const trickle = setInterval(() => socket.write("x-trickle: 1\r\n"), IDLE_TIMEOUT * 1000 / 4);
      socket.once("close", () => clearInterval(trickle));
      sockets.push(socket);
    }
    // Bounded well below the 30 s Node's own check of its timeouts takes by default: a server
    // that lets them stay past their timeout fails here.
    const health = await eventually(async () => {
      const answer = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(1000) });
      if (answer.status !== 200) throw new Error(`health answered ${answer.status}`);
      return answer;
    }, 10_000);
    assert.is(health.status, 200);
    await eventually(async () => {
      if (answers.length < cap) throw new Error(`${cap - answers.length} trickling sockets still open`);
    }, 5000);
    assert.equal([...new Set(answers)], ["HTTP/1.1 408 Request Timeout"]);
  } finally {
    for (const socket of sockets) socket.destroy();
    await server.stop();
  }
});

connections("an endless chunked upload past the body limit gets one 413 and its connection closed", async ({ dir }) => {
  const db = `file:${join(dir, "live.db")}`;
  const key = await newKey(db);
  const server = await serve(["--db", db]);
  try {
    const socket = await open(server.url);
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (text: string) => (received += text));
    socket.on("error", () => {});
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write(`POST /api/submission HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`);
    const chunk = `10000\r\n${"x".repeat(0x10000)}\r\n`;
        const pump = (async () => {
      while (!socket.destroyed) {
        if (!socket.write(chunk)) await new Promise((resolve) => (socket.once("drain", resolve), socket.once("close", resolve)));
      }
    })();
    const bound = new Promise<string>((resolve) => setTimeout(() => resolve("still open"), 10_000).unref());
    assert.is(await Promise.race([closed.then(() => "closed"), bound]), "closed", "the server kept reading the endless body");
    await pump;
    assert.is(received.match(/HTTP\/1\.1 \d{3}/g)?.join(), "HTTP/1.1 413", received);
  } finally {
    await server.stop();
  }
});

connections("a client that abandons its upload is neither answered 500 nor logged as a server error", async ({ dir }) => {
  const db = `file:${join(dir, "live.db")}`;
  const key = await newKey(db);
  const server = await serve(["--db", db, "--log-format", "json"]);
  let log = "";
  try {
    // The first create loads the create route's modules (src/handler.ts); the abandoned upload
    // is the second, so that what is timed below is the server's handling of it.
    assert.is((await create(server.url, key, "first@example.com")).status, 201);
    const socket = await open(server.url);
    socket.on("error", () => {});
    socket.write(`POST /api/submission HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: 50000\r\n\r\n{"popupId":"p1","data":{"text":"`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    // The server has dealt with it once it logged the request.
    await eventually(async () => {
      const health = await fetch(`${server.url}/api/health`);
      assert.is(health.status, 200);
    }, 5000);
  } finally {
    log = (await server.stop()).stderr;
  }
  const entries = log.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { level: number; req?: { url: string }; res?: { statusCode: number } });
  const upload = entries.filter((entry) => entry.req?.url === "/api/submission" && entry.res !== undefined).at(-1);
  assert.ok(upload, `the abandoned upload was logged:\n${log}`);
  assert.is(upload!.res!.statusCode, 400, log);
  assert.equal(entries.filter((entry) => entry.level >= 50), [], log);
});

connections.run();
