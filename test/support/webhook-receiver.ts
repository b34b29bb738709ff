/**
 * A webhook receiver for tests: a real node:http server (it runs under Node, Bun and Deno) that
 * keeps every request it gets and answers what the test says (`GET /received` lists them).
 * Signatures are checked with the `standardwebhooks` package (./webhook-verify.ts).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ReceivedDelivery } from "./webhook-verify.ts";

export { type ReceivedDelivery, verifies, verifyDelivery } from "./webhook-verify.ts";

type Answer = number | { status: number; headers: Record<string, string> };

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** What the next requests get: a status (default 204), a status with headers, or a function of the request. */
  answer: Answer | ((delivery: ReceivedDelivery) => Answer);
  /** The paths and `webhook-id`s (`path id`) of which two requests were being answered at once. */
  overlapping: Set<string>;
  /** How long each answer waits, in milliseconds (default 0). */
  delayMs: number;
  /** When set, how long the answer to this request waits instead of `delayMs`. */
  delayOf?: (delivery: ReceivedDelivery) => number;
  /** For each of `received`, how many requests to its path were being answered when it came, itself included. */
  answeringAtOnce: number[];
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    answer: 204,
    overlapping: new Set(),
    delayMs: 0,
    answeringAtOnce: [],
    close: () => Promise.resolve(),
  };
  const inFlight = new Map<string, number>();
  const answeringOnPath = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    // What it got, for a test in another process or runtime (workerd).
    if (request.method === "GET" && request.url === "/received") {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(receiver.received));
      return;
    }
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", async () => {
      const header = (name: string) => String(request.headers[name] ?? "");
      const delivery = { path: request.url ?? "", id: header("webhook-id"), timestamp: header("webhook-timestamp"), signature: header("webhook-signature"), body, headers: request.headers };
      const key = `${delivery.path} ${delivery.id}`;
      const answering = (inFlight.get(key) ?? 0) + 1;
      inFlight.set(key, answering);
      if (answering > 1) receiver.overlapping.add(key);
      const onPath = (answeringOnPath.get(delivery.path) ?? 0) + 1;
      answeringOnPath.set(delivery.path, onPath);
      receiver.received.push(delivery);
      receiver.answeringAtOnce.push(onPath);
      const delayMs = receiver.delayOf?.(delivery) ?? receiver.delayMs;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      inFlight.set(key, inFlight.get(key)! - 1);
      answeringOnPath.set(delivery.path, answeringOnPath.get(delivery.path)! - 1);
      const answer = typeof receiver.answer === "function" ? receiver.answer(delivery) : receiver.answer;
      const { status, headers } = typeof answer === "number" ? { status: answer, headers: {} } : answer;
      response.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}
