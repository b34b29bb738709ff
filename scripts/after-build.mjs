// After `tsc -p tsconfig.build.json`, four things tsc does not do:
// - it rewrites `./x.ts` imports to `./x.js` in the emitted JavaScript but not in the .d.ts
//   files, and a runtime that resolves types literally (Deno) finds no `./x.ts` in dist/;
// - the `formsink` bin is one bundled file: loading the ~180 modules it is made of one by one
//   took about 50 ms of the ~340 ms from `formsink serve` to its first answer (bench/README.md,
//   cold start); libsql (native), @libsql/client (only for remote databases) and postgres (only for
//   PostgreSQL) stay outside. The webhook deliveries' thread (cli/webhook-worker.ts) is bundled
//   the same way beside it, as the file `serve` starts the thread from;
// - the bin must be executable for `npx formsink` in a checkout (npm marks it so itself only
//   when it installs the package);
// - the popup script the README tells users to embed ships as it is, to be served from
//   node_modules/formsink/dist/popup/ (exported as `formsink/popup/formsink-popup.js`).
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const RELATIVE_TS_IMPORT = /((?:from|import)\s*\(?\s*)(["'])(\.\.?\/[^"']*)\.ts\2/g;

for (const file of readdirSync("dist", { recursive: true, encoding: "utf8" })) {
  if (!file.endsWith(".d.ts")) continue;
  const path = join("dist", file);
  const text = readFileSync(path, "utf8");
  const rewritten = text.replace(RELATIVE_TS_IMPORT, "$1$2$3.js$2");
  if (rewritten !== text) writeFileSync(path, rewritten);
}

/**
 * The packages matching `filter`, CommonJS, loaded with `require` instead of `import`: Node reads
 * a CommonJS module that ESM imports with a lexer of its own to find its export names, and that
 * lexer gets hot enough on libsql's comments for V8 to compile it with its optimizing compiler,
 * whose code pages then stay in the idle server's memory (bench/README.md, memory.ts).
 */
function requiredNotImported(filter) {
  return {
    name: "required-not-imported",
    setup(build) {
      build.onResolve({ filter }, ({ path }) => ({ path, namespace: "required" }));
      build.onLoad({ filter: /.*/, namespace: "required" }, ({ path }) => ({
        contents: `import { createRequire } from "node:module"; export default createRequire(import.meta.url)(${JSON.stringify(path)});`,
        loader: "js",
      }));
    },
  };
}

await build({
  entryPoints: ["cli/bin.ts", "cli/webhook-worker.ts"],
  outdir: "dist/cli",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["@libsql/client", "postgres"],
  plugins: [requiredNotImported(/^libsql(\/promise)?$/)],
  logLevel: "warning",
});
chmodSync("dist/cli/bin.js", 0o755);

mkdirSync("dist/popup", { recursive: true });
copyFileSync("examples/popup/formsink-popup.js", "dist/popup/formsink-popup.js");
