/**
 * The webhook transport for Node, Bun and Deno: node:http and node:https with a `lookup` that
 * refuses a name resolving to any loopback, private, link-local, carrier-grade NAT, multicast
 * or metadata address. The check runs where the socket connects, on the addresses it connects
 * to, so a name cannot resolve to a public address for the check and a private one for the
 * connection. IP literals never reach `lookup`: `checkDeliveryUrl` judges those.
 */
import { createHmac } from "node:crypto";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { Agent as HttpAgent, type ClientRequest, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { blockedAddressReason } from "../src/webhooks/addresses.ts";
import { checkDeliveryUrl, WebhookRefused, type WebhookTransport, type WebhookTransportOptions } from "../src/webhooks/transport.ts";

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

export function createWebhookTransport(options: WebhookTransportNodeOptions = {}): ClosableWebhookTransport {
  const { allowPrivate = false, resolve = systemResolve } = options;
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (found) => {
        const addresses = found.filter((a) => !lookupOptions.family || a.family === lookupOptions.family);
        for (const { address } of allowPrivate ? [] : addresses) {
          const reason = blockedAddressReason(address);
          if (reason) throw new WebhookRefused(`refused: ${hostname} resolves to ${address}, ${reason}`);
        }
        const [first] = addresses;
        if (!first) throw Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" });
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
    ).catch((error: NodeJS.ErrnoException) => callback(error, ""));
  };
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

  const transport = (request: Parameters<WebhookTransport>[0]) =>
    new Promise<{ status: number }>((resolve, reject) => {
      const url = checkDeliveryUrl(request.url, options);
      const secure = url.protocol === "https:";
      const outgoing: ClientRequest = (secure ? httpsRequest : httpRequest)(url, {
        method: "POST",
        headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
        agent: secure ? agents.https : agents.http,
        lookup,
      });
      const timer = setTimeout(() => outgoing.destroy(Object.assign(new Error("timed out"), { name: "TimeoutError" })), request.timeoutMs);
      outgoing.on("response", (response) => {
        clearTimeout(timer);
        // Read and drop the body so that the connection can carry the next delivery.
        response.resume();
        resolve({ status: response.statusCode ?? 0 });
      });
      outgoing.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      outgoing.end(request.body);
    });
  return Object.assign(transport, {
    hmacSha256: (key: Uint8Array, content: string) => createHmac("sha256", key).update(content).digest("base64"),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}
