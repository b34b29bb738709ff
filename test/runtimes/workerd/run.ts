/**
 * Runs the workerd tests: bundles ./worker.ts as a Worker would be bundled, starts it in
 * workerd through Miniflare with a local D1 database, starts a Hrana stand-in for libSQL over
 * HTTP and a webhook receiver, asks the worker to run its suites, and prints uvu's report. Exits 1 on any failure.
 *
 * The suites' requests go out of workerd to a relay here, which sends them back in to workerd's
 * HTTP server with Node's fetch: workerd's own fetch client drops an answer that arrives while
 * it is still uploading (an early 413), so it cannot be the client that tests the server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Miniflare } from "miniflare";
import { bundleWorker } from "../../support/bundle-worker.ts";
import { startHranaServer } from "../../support/hrana-server.ts";
import { startReceiver } from "../../support/webhook-receiver.ts";

const HRANA_TOKEN = "workerd-test-token";

let workerdUrl: URL | undefined;
const relay = createServer((req, res) => {
  forward(req, res).catch((error: unknown) => res.writeHead(502).end(`relay failed: ${String(error)}`));
});
// workerd reuses its connection to the relay however long a test pauses between requests (a
// big import into D1, say); Node's default would close it after 5 idle seconds, and workerd's
// next request on it would fail with "Network connection lost".
relay.keepAliveTimeout = 10 * 60_000;
await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;

async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    // fetch sets these itself from the URL and the body it sends, and decodes what it receives
    if (value !== undefined && !["host", "connection", "content-length", "accept-encoding"].includes(name)) {
      headers.set(name, String(value));
    }
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const response = await fetch(new URL(req.url!, workerdUrl), {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
    redirect: "manual",
  });
  // The body is passed on decoded, so its encoding and length headers no longer apply.
  const answer = [...response.headers].filter(([name]) => name !== "content-encoding" && name !== "content-length");
  res.writeHead(response.status, answer.flat());
  if (!response.body) {
    res.end();
    return;
  }
  // Streamed, and cancelled when the client goes away, so that a client that stops reading
  // (an export it abandons) is seen by workerd as a client that hung up.
  const reader = response.body.getReader();
  res.once("close", () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (done || res.destroyed) break;
    if (!res.write(value)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done).off("close", done);
          resolve();
        };
        res.on("drain", done).on("close", done);
      });
    }
  }
  res.end();
}

const hrana = await startHranaServer(HRANA_TOKEN);
const receiver = await startReceiver();
const mf = new Miniflare({
  modules: true,
  script: await bundleWorker(new URL("./worker.ts", import.meta.url).pathname),
  compatibilityDate: "2026-07-01",
  d1Databases: { DB: "formsink-test" },
  bindings: { HRANA_URL: hrana.url, HRANA_TOKEN, RELAY_URL: relayUrl, RECEIVER_URL: receiver.url },
});
try {
  workerdUrl = await mf.ready;
  const response = await fetch(new URL("/__run", workerdUrl));
  process.stdout.write(await response.text());
  process.exitCode = response.ok ? 0 : 1;
} finally {
  await mf.dispose();
  await hrana.close();
  await receiver.close();
  relay.close();
}
