/**
 * The webhook transport for Node, Bun and Deno: node:net and node:tls with a `lookup` that
 * refuses a name resolving to any loopback, private, link-local, carrier-grade NAT, multicast
 * or metadata address. The check runs where the socket connects, on the addresses it connects
 * to, so a name cannot resolve to a public address for the check and a private one for the
 * connection; a kept-alive connection was checked when it was made. IP literals never reach
 * `lookup`: `checkDeliveryUrl` judges those.
 *
 * A delivery is one POST whose answer matters only by its status, so the request is written
 * and the answer's head read here (./webhook-http.ts), not through node:http, whose client costs
 * several times the CPU per request: the dispatcher's thread spends most of its time there.
 */
import { createHmac } from "node:crypto";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction, connect as netConnect, type OnReadOpts, type Socket } from "node:net";
import { type ConnectionOptions, connect as tlsConnect } from "node:tls";
import { blockedAddressReason } from "../src/webhooks/addresses.ts";
import { checkDeliveryUrl, WebhookRefused, type WebhookTransport, type WebhookTransportOptions } from "../src/webhooks/transport.ts";
import { type Answer, readAnswerHead, requestStart, requestText } from "./webhook-http.ts";

export interface WebhookTransportNodeOptions extends WebhookTransportOptions {
  /** Every address of a name; default node:dns `lookup` with `all`. Tests give their own. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}

export interface ClosableWebhookTransport extends WebhookTransport {
  /** Closes the kept-alive connections. */
  close(): void;
}

const systemResolve = (hostname: string) =>
  new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** A delivery URL once checked (`checkDeliveryUrl`) and parsed: what every request to it shares. */
interface Target {
  url: URL;
  origin: string;
  start: string;
}

/** URLs whose check and parse are kept: an endpoint's every delivery goes to the same one. */
const MOST_TARGETS = 1000;

/** The size of the buffer answers are read into; an answer's head is read across as many reads as it takes. */
const READ_BUFFER_BYTES = 16 * 1024;

/** One connection to a receiver, and the request it carries now (none while it waits in the pool). */
interface Connection {
  socket: Socket;
  origin: string;
  exchange?: { data(text: string): void; ended(error: Error): void };
}

export function createWebhookTransport(options: WebhookTransportNodeOptions = {}): ClosableWebhookTransport {
  const { allowPrivate = false, resolve = systemResolve } = options;
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (found) => {
        const addresses = found.filter((a) => !lookupOptions.family || a.family === lookupOptions.family);
        for (const { address } of allowPrivate ? [] : addresses) {
          const reason = blockedAddressReason(address);
          if (reason) throw new WebhookRefused(`${hostname} resolves to ${address}, ${reason}`, { liftedByAllowPrivate: true });
        }
        const [first] = addresses;
        if (!first) throw Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" });
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
    ).catch((error: NodeJS.ErrnoException) => callback(error, ""));
  };

  /**
   * Per URL, its check's and parse's result: the check depends on the URL and the options alone
   * (a name's addresses are checked where it is resolved, at each connection), so it is made once
   * per URL, not once per delivery. A URL refused is not kept: it is refused again each time.
   */
  const targets = new Map<string, Target>();
  const targetOf = (text: string): Target => {
    let target = targets.get(text);
    if (target === undefined) {
      const url = checkDeliveryUrl(text, options);
      if (targets.size >= MOST_TARGETS) targets.clear();
      target = { url, origin: `${url.protocol}//${url.host}`, start: requestStart(url) };
      targets.set(text, target);
    }
    return target;
  };

  /**
   * The one buffer every connection's answers are read into (node:net's and node:tls's
   * `onread`), each read copied out as text at once. Through the socket's stream ('data'
   * events), each answer would be a Buffer of its own and a trip through the stream's
   * bookkeeping, on the thread that sends every delivery (bench/webhooks.ts, the dispatcher's CPU
   * per delivery).
   */
  const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);

  /** Every open connection; per origin, those that wait for the next delivery. */
  const open = new Set<Connection>();
  const waiting = new Map<string, Connection[]>();
  let closed = false;

  const discard = (connection: Connection) => {
    open.delete(connection);
    const pool = waiting.get(connection.origin);
    const at = pool?.indexOf(connection) ?? -1;
    if (at >= 0) pool!.splice(at, 1);
    if (pool?.length === 0) waiting.delete(connection.origin);
    connection.socket.destroy();
  };
  const keep = (connection: Connection) => {
    connection.exchange = undefined;
    if (closed) return discard(connection);
    // A waiting connection must not keep a process alive once everything else stopped.
    connection.socket.unref();
    const pool = waiting.get(connection.origin);
    if (pool) pool.push(connection);
    else waiting.set(connection.origin, [connection]);
  };
  const connect = (url: URL, origin: string): Connection => {
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const secure = url.protocol === "https:";
    const port = Number(url.port) || (secure ? 443 : 80);
    // A waiting connection that hears anything, or ends, is of no further use.
    const onread = {
      buffer: readBuffer,
      callback: (length: number) => {
        if (connection.exchange) connection.exchange.data(readBuffer.toString("latin1", 0, length));
        else discard(connection);
        return true;
      },
    };
    // node:tls takes `onread` as node:net does (Node's documentation of tls.connect); @types/node's ConnectionOptions leaves it out.
    const secureOptions: ConnectionOptions & { onread: OnReadOpts } = {
      host, port, servername: isIP(host) ? undefined : host, lookup, ALPNProtocols: ["http/1.1"], onread,
    };
    const socket = secure ? tlsConnect(secureOptions) : netConnect({ host, port, lookup, onread });
    socket.setNoDelay(true);
    const connection: Connection = { socket, origin };
    socket.on("error", (error: Error) => {
      connection.exchange?.ended(error);
      discard(connection);
    });
    socket.on("close", () => {
      connection.exchange?.ended(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
      discard(connection);
    });
    open.add(connection);
    return connection;
  };

  const transport = (request: Parameters<WebhookTransport>[0]) =>
    new Promise<{ status: number }>((resolve, reject) => {
      const { url, origin, start } = targetOf(request.url);
      const connection = waiting.get(origin)?.pop() ?? connect(url, origin);
      if (waiting.get(origin)?.length === 0) waiting.delete(origin);
      connection.socket.ref();
      let received = "";
      const timer = setTimeout(() => {
        connection.exchange?.ended(Object.assign(new Error("timed out"), { name: "TimeoutError" }));
        discard(connection);
      }, request.timeoutMs);
      const done = (answer: Answer) => {
        clearTimeout(timer);
        connection.exchange = undefined;
        resolve({ status: answer.status });
        // Kept for the next delivery only when this answer is all there, and nothing after it.
        if (answer.reusable && answer.rest === answer.bodyLength) keep(connection);
        else discard(connection);
      };
      connection.exchange = {
        data(text) {
          received += text;
          try {
            const answer = readAnswerHead(received);
            if (answer) done(answer);
          } catch (error) {
            this.ended(error as Error);
            discard(connection);
          }
        },
        ended(error) {
          clearTimeout(timer);
          connection.exchange = undefined;
          reject(error);
        },
      };
      connection.socket.write(requestText(url, request.headers, request.body, start));
    });
  return Object.assign(transport, {
    hmacSha256: (key: Uint8Array, content: string) => createHmac("sha256", key).update(content).digest("base64"),
    close() {
      closed = true;
      for (const connection of open) discard(connection);
    },
  });
}
