/**
 * One server for the Node bridge benchmark, in a process of its own so the load generator
 * does not share its core: `node --import tsx bench/support/bridge-server.ts <kind>`.
 * Prints the URL on stdout, then serves until killed. Every kind answers the same two routes:
 * GET -> a fixed 2 KB JSON; POST -> reads and parses the JSON body, answers 201.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { serve as srvxServe } from "srvx";
import { serve } from "../../adapters/node.ts";
import { BRIDGE_KINDS, type BridgeKind } from "./bridge-kinds.ts";

const FIXED_JSON = JSON.stringify({
  items: Array.from({ length: 12 }, (_, i) => ({ submissionId: `0193f5c2-7b8e-7cc1-9a1e-4f1f9d6f0c${10 + i}`, popupId: "popup_123", status: "pending", createdAt: "2025-07-12T10:30:00.000Z", domain: "example.com" })),
  limit: 12,
  offset: 0,
  total: 12,
}).padEnd(2048, " ");
const JSON_HEADERS = { "content-type": "application/json", "content-length": String(Buffer.byteLength(FIXED_JSON)) };

async function fetchHandler(request: Request): Promise<Response> {
  if (request.method === "POST") {
    const body = (await request.json()) as { popupId?: unknown };
    return new Response(JSON.stringify({ popupId: body.popupId }), { status: 201, headers: { "content-type": "application/json" } });
  }
  return new Response(FIXED_JSON, { headers: JSON_HEADERS });
}

async function listenOnFreePort(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function start(kind: BridgeKind): Promise<string> {
  switch (kind) {
    case "raw node:http": {
      const server = createServer((req, res) => {
        if (req.method === "POST") {
          const chunks: Buffer[] = [];
          req.on("data", (chunk: Buffer) => chunks.push(chunk));
          req.on("end", () => {
            const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { popupId?: unknown };
            res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ popupId: body.popupId }));
          });
          return;
        }
        res.writeHead(200, JSON_HEADERS).end(FIXED_JSON);
      });
      return listenOnFreePort(server);
    }
    case "formsink adapters/node.ts":
      return (await serve(fetchHandler, { port: 0 })).url;
    case "@hono/node-server":
      return listenOnFreePort(createServer(getRequestListener(fetchHandler)));
    case "@hono/node-server (globals kept)":
      return listenOnFreePort(createServer(getRequestListener(fetchHandler, { overrideGlobalObjects: false })));
    case "srvx": {
      const server = await srvxServe({ fetch: fetchHandler, port: 0, hostname: "127.0.0.1", silent: true }).ready();
      return server.url!.replace(/\/$/, "");
    }
  }
}

const kind = process.argv[2] as BridgeKind;
if (!BRIDGE_KINDS.includes(kind)) throw new Error(`unknown server kind "${kind}"; one of: ${BRIDGE_KINDS.join(", ")}`);
process.stdout.write(`${await start(kind)}\n`);
