// After `tsc -p tsconfig.build.json`: tsc rewrites `./x.ts` imports to `./x.js` in the emitted
// JavaScript but not in the .d.ts files, and a runtime that resolves types literally (Deno)
// finds no `./x.ts` in dist/. This rewrites them the same way.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const RELATIVE_TS_IMPORT = /((?:from|import)\s*\(?\s*)(["'])(\.\.?\/[^"']*)\.ts\2/g;

for (const file of readdirSync("dist", { recursive: true, encoding: "utf8" })) {
  if (!file.endsWith(".d.ts")) continue;
  const path = join("dist", file);
  const text = readFileSync(path, "utf8");
  const rewritten = text.replace(RELATIVE_TS_IMPORT, "$1$2$3.js$2");
  if (rewritten !== text) writeFileSync(path, rewritten);
}
