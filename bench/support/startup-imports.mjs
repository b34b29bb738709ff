/**
 * Child process of bench/memory.ts (plain node with --expose-gc: JavaScript, so that no
 * TypeScript loader weighs on the figures): what each module the idle server loads adds to the process, in the order the server
 * loads them, then arktype, which it loads only when a request needs it. Prints one JSON line: per step, RSS and V8 heap after full garbage collections.
 */
const gc = globalThis.gc;
if (!gc) throw new Error("run with --expose-gc");

// The CLI itself is one bundle (scripts/after-build.mjs) that runs when imported, so what it is
// made of is measured through the package's own modules.
const STEPS = [
  ["node itself", async () => {}],
  ["+ import libsql (the native binding)", () => import("libsql")],
  ["+ import formsink (dist/src/index.js)", () => import(new URL("../../dist/src/index.js", import.meta.url).href)],
  ["+ import formsink/libsql and formsink/node", () => Promise.all(["../../dist/src/stores/libsql/index.js", "../../dist/adapters/node.js"].map((path) => import(new URL(path, import.meta.url).href)))],
  // Not part of the idle server: loaded by the first request that is refused (to word its 400)
  // or that validates with arktype (events, export, privacy, webhooks, a status change).
  ["+ arktype and the schemas (a 400, an admin route)", () => import(new URL("../../dist/src/schemas.js", import.meta.url).href)],
];

const steps = [];
for (const [name, load] of STEPS) {
  await load();
  for (let i = 0; i < 4; i++) gc();
  const { rss, heapUsed, heapTotal } = process.memoryUsage();
  steps.push({ name, rss, heapUsed, heapTotal });
}
console.log(JSON.stringify(steps));
