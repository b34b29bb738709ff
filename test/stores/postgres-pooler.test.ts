/**
 * The PostgreSQL store behind a pooler that fails a new connection's first statement: PgBouncer
 * does, while the database restarts, with `server login has been failing, try again later
 * (server_login_retry)` (SQLSTATE 08P01) and a closed connection. A stand-in speaks just enough
 * of the protocol to accept a login and answer every statement that way, as PgBouncer does, or
 * to refuse the login as PgBouncer refuses a wrong password; the last test does the same with
 * Debian's PgBouncer in front of a cluster it stops and starts again.
 */
import { createServer, type Server, type Socket } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openPostgresStore } from "../../src/stores/postgres/index.ts";
import { StoreUnavailable } from "../../src/store.ts";
import { runHere } from "../cli/run.ts";
import { startPgBouncer, startPostgresCluster } from "../support/postgres.ts";

/** A message of the backend protocol: its type byte, its length, its body. */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const int32 = (...values: number[]) => Buffer.concat(values.map((value) => Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255])));

/** A FATAL ErrorResponse as PgBouncer sends it: SQLSTATE 08P01 whatever the reason. */
const fatal = (text: string) => message("E", Buffer.from(["SFATAL", "VFATAL", "C08P01", `M${text}`].map((field) => `${field}\0`).join("") + "\0", "latin1"));

const LOGIN_FAILING = fatal("server login has been failing, try again later (server_login_retry)");

/**
 * Accepts any login, then answers the first statement of each connection with PgBouncer's
 * refusal and closes it; or, given `refuseLogin`, refuses the login itself with that text.
 */
async function refusingPooler(refuseLogin?: string): Promise<{ server: Server; url: string }> {
  const server = createServer((socket: Socket) => {
    let buffered = Buffer.alloc(0);
    let loggedIn = false;
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!loggedIn) {
        if (buffered.length < 4 || buffered.length < buffered.readInt32BE(0)) return;
        if (refuseLogin !== undefined) return void socket.end(fatal(refuseLogin));
        buffered = buffered.subarray(buffered.readInt32BE(0));
        loggedIn = true;
        // AuthenticationOk, BackendKeyData, ReadyForQuery (idle).
        socket.write(Buffer.concat([message("R", int32(0)), message("K", int32(1, 2)), message("Z", Buffer.from("I"))]));
      }
      while (buffered.length >= 5 && buffered.length >= 1 + buffered.readInt32BE(1)) {
        const type = String.fromCharCode(buffered[0]!);
        buffered = buffered.subarray(1 + buffered.readInt32BE(1));
        // A simple query, or the Sync that ends an extended one: the statement is complete.
        if (type === "Q" || type === "S") socket.end(LOGIN_FAILING);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `postgres://formsink:secret@127.0.0.1:${port}/formsink?prepare=false` };
}

test("a pooler failing a new connection's first statement is a 503 for the caller, and nothing is left to end the process", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  const { server, url } = await refusingPooler();
  try {
    const error = await openPostgresStore({ url, timeoutMs: 2000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.instance(error, StoreUnavailable);
    assert.is((error as StoreUnavailable).message, "the database is unreachable or restarting");
    // A rejection nobody handles is reported after the turn it happened in.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(unhandled.map(String), [], "no rejection went unhandled");
  } finally {
    process.off("unhandledRejection", onUnhandled);
    server.close();
  }
});

test("a pooler refusing the login: the command says what the pooler said, not only that the database is unreachable", async () => {
  const { server, url } = await refusingPooler('password authentication failed for user "formsink"');
  try {
    const listed = await runHere(["keys", "list", "--db", url]);
    assert.is(listed.code, 3, listed.stderr);
    assert.match(listed.stderr, /the database is unreachable or restarting \(password authentication failed for user "formsink"\)/);
    assert.not.ok(listed.stderr.includes("secret"), "nor the password");
  } finally {
    server.close();
  }
});

test("Debian's PgBouncer, its database restarted under a store: refusals are 503s, nothing goes unhandled, and the store recovers by itself", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  const cluster = await startPostgresCluster();
  try {
    // PgBouncer waits server_login_retry after a failed login before it tries the database again.
    const pooler = await startPgBouncer(cluster, { server_login_retry: "1" });
    try {
      const { url } = await cluster.createDatabase();
      const database = new URL(url).pathname.slice(1);
      const { store } = await openPostgresStore({ url: `${pooler.url(database)}?prepare=false`, timeoutMs: 2000 });
      try {
        const { id } = await store.ensureAccount("acme");
        await cluster.stopServer();
        for (let i = 0; i < 5; i++) {
          const failed = await store.ensureAccount("acme").then(() => undefined, (error: unknown) => error);
          assert.instance(failed, StoreUnavailable, String(failed));
        }
        await cluster.startServer();
        let recovered: string | undefined;
        for (const deadline = Date.now() + 15_000; recovered === undefined && Date.now() < deadline;) {
          recovered = await store.ensureAccount("acme").then((account) => account.id, async () => {
            await new Promise((resolve) => setTimeout(resolve, 250));
            return undefined;
          });
        }
        assert.is(recovered, id, "the store answers again once the database is back");
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(unhandled.map(String), [], "no rejection went unhandled");
      } finally {
        await store.close();
      }
    } finally {
      await pooler.stop();
    }
  } finally {
    process.off("unhandledRejection", onUnhandled);
    await cluster.stop();
  }
});

test.run();
