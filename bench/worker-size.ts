/**
 * What a Worker deploying formsink uploads: examples/workers/worker.ts bundled as Wrangler
 * would (esbuild, workerd conditions), minified and gzipped, with the largest inputs.
 * Run: npm run size
 */
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { WORKER_BUILD } from "../test/support/bundle-worker.ts";
import { formatTable } from "./support/load.ts";

const ENTRY = "examples/workers/worker.ts";
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

const result = await build({ ...WORKER_BUILD, entryPoints: [ENTRY], minify: true, metafile: true });
const code = result.outputFiles![0]!.contents;
const gzipped = gzipSync(code, { level: 9 }).byteLength;

const byPackage = new Map<string, number>();
for (const [path, output] of Object.entries(Object.values(result.metafile!.outputs)[0]!.inputs)) {
  const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? "formsink";
  byPackage.set(name, (byPackage.get(name) ?? 0) + output.bytesInOutput);
}
const largest = [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 8);

console.log(`Worker bundle of ${ENTRY} (minified, by package):\n`);
console.log(formatTable(["package", "minified"], largest.map(([name, bytes]) => [name, kib(bytes)])));
console.log(`\nworker bundle: ${kib(code.byteLength)} minified, ${kib(gzipped)} gzipped`);
