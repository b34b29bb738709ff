// After `tsc -p tsconfig.build.json`, two things tsc does not do:
// - it rewrites `./x.ts` imports to `./x.js` in the emitted JavaScript but not in the .d.ts
//   files, and a runtime that resolves types literally (Deno) finds no `./x.ts` in dist/;
// - the `formsink` bin must be executable for `npx formsink` in a checkout (npm marks it so
//   itself only when it installs the package).
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const RELATIVE_TS_IMPORT = /((?:from|import)\s*\(?\s*)(["'])(\.\.?\/[^"']*)\.ts\2/g;

for (const file of readdirSync("dist", { recursive: true, encoding: "utf8" })) {
  if (!file.endsWith(".d.ts")) continue;
  const path = join("dist", file);
  const text = readFileSync(path, "utf8");
  const rewritten = text.replace(RELATIVE_TS_IMPORT, "$1$2$3.js$2");
  if (rewritten !== text) writeFileSync(path, rewritten);
}

chmodSync("dist/cli/bin.js", 0o755);
