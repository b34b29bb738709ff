/**
 * Node bridge: how fast does a Fetch handler run on node:http through formsink's own adapter,
 * against a raw node:http server and the two well-kept bridges (@hono/node-server, srvx)?
 * Each server runs alone in its own process on core 0; autocannon runs here on core 1;
 * 10 keep-alive connections. `--quick` shortens each run.
 *
 *   node --import tsx bench/node-bridge.ts [--quick]
 */
import { BRIDGE_KINDS } from "./support/bridge-kinds.ts";
import { canPin, formatTable, pinSelf, runLoad, startServerProcess, stopServerProcess, type LoadResult } from "./support/load.ts";

const quick = process.argv.includes("--quick");
// `--only=<text>`: run raw node:http and the servers whose name contains <text>.
const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length);
const kinds = BRIDGE_KINDS.filter((kind) => kind === "raw node:http" || only === undefined || kind.includes(only));
const seconds = quick ? 3 : 8;
const SERVER = new URL("./support/bridge-server.ts", import.meta.url);
const WORKLOADS = {
  "GET 2 KB JSON": { method: "GET" as const },
  "POST 1 KB JSON": {
    method: "POST" as const,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ popupId: "popup_123", data: { email: "jane@example.com", note: "x".repeat(950) } }),
  },
};

pinSelf(1);
console.log(`Node ${process.version}; ${canPin() ? "server on core 0, load on core 1" : "taskset unavailable: not pinned"}; ${seconds} s per run, 10 connections\n`);

const results = new Map<string, LoadResult>();
for (const kind of kinds) {
  const { url, child } = await startServerProcess(SERVER, [kind], 0);
  try {
    for (const [name, workload] of Object.entries(WORKLOADS)) {
      await runLoad({ url, ...workload, durationSeconds: 1 }); // warm-up: JIT, connections
      results.set(`${kind}|${name}`, await runLoad({ url, ...workload, durationSeconds: seconds }));
    }
  } finally {
    await stopServerProcess(child);
  }
}

const shareOfRaw = (kind: string, workload: string) =>
  `${((100 * results.get(`${kind}|${workload}`)!.requestsPerSecond) / results.get(`raw node:http|${workload}`)!.requestsPerSecond).toFixed(0)}%`;

const rows: string[][] = [];
for (const name of Object.keys(WORKLOADS)) {
  for (const kind of kinds) {
    const r = results.get(`${kind}|${name}`)!;
    rows.push([
      `${name} - ${kind}`, r.requestsPerSecond.toFixed(0), shareOfRaw(kind, name),
      r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), String(r.errors + r.non2xx),
    ]);
  }
}
console.log(formatTable(["workload - server", "req/s", "vs raw", "p50 ms", "p99 ms", "errors"], rows));

const shares = (kind: string) => Object.keys(WORKLOADS).map((name) => shareOfRaw(kind, name)).join("/");
console.log(`\nheadline: GET/POST req/s as a share of raw node:http - ${kinds.slice(1).map((kind) => `${kind} ${shares(kind)}`).join(", ")}`);
