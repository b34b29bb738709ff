// After `tsc -p tsconfig.build.json`, four things tsc does not do:
// - it rewrites `./x.ts` imports to `./x.js` in the emitted JavaScript but not in the .d.ts
//   files, and a runtime that resolves types literally (Deno) finds no `./x.ts` in dist/;
// - the `formsink` bin is one bundled file: Node loading the modules it is made of one by one
//   would add to the time from `formsink serve` to its first answer (bench/cold-start.ts);
//   libsql (native), @libsql/client (only for remote databases) and postgres (only for
//   PostgreSQL) stay outside, and arktype is a file beside it (`arktypeBesideTheBin`). The webhook
//   deliveries' thread (cli/webhook-worker.ts) is bundled the same way beside it, as the file
//   `serve` starts the thread from;
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
 * libsql and libsql/promise, CommonJS, loaded with `require` instead of `import`: Node reads
 * a CommonJS module that ESM imports with a lexer of its own to find its export names, and that
 * lexer gets hot enough on libsql's comments for V8 to compile it with its optimizing compiler,
 * whose code pages then stay in the idle server's memory (bench/README.md, memory.ts).
 *
 * libsql and libsql/promise are loaded together, by `loadLibsqlAskingForTheReportOnce`: each picks
 * its native addon by asking `process.report.getReport()` whether the C library is glibc, a
 * report that takes milliseconds to gather (it symbolizes the native stack), and the second
 * would gather the same report again on the way to `formsink serve`'s first answer
 * (bench/README.md, cold-start.ts). While the two load, the report is gathered once and handed
 * to both; `process.report` is as it was once they have loaded.
 */
function libsqlRequiredNotImported() {
  return {
    name: "libsql-required-not-imported",
    setup(build) {
      build.onResolve({ filter: /^libsql(\/promise)?$/ }, ({ path }) => ({ path, namespace: "required" }));
      build.onResolve({ filter: /^libsql-bindings$/, namespace: "required" }, ({ path }) => ({ path, namespace: "required" }));
      build.onLoad({ filter: /^libsql-bindings$/, namespace: "required" }, () => ({
        contents: `import { createRequire } from "node:module";
function loadLibsqlAskingForTheReportOnce() {
  const report = typeof process.report?.getReport === "function" ? process.report : undefined;
  const getReport = report?.getReport;
  let gathered;
  try {
    if (report) report.getReport = function () { return (gathered ??= getReport.apply(this, arguments)); };
  } catch {
    // A runtime whose process.report cannot be changed: each asks for its own.
  }
  try {
    return { sync: createRequire(import.meta.url)("libsql"), promise: createRequire(import.meta.url)("libsql/promise") };
  } finally {
    if (report && report.getReport !== getReport) report.getReport = getReport;
  }
}
export const { sync, promise } = loadLibsqlAskingForTheReportOnce();`,
        loader: "js",
      }));
      build.onLoad({ filter: /^libsql(\/promise)?$/, namespace: "required" }, ({ path }) => ({
        contents: `import { ${path === "libsql" ? "sync" : "promise"} as binding } from "libsql-bindings"; export default binding;`,
        loader: "js",
      }));
    },
  };
}

/**
 * arktype as a file of its own beside the bin (dist/cli/arktype.cjs), required the first time a
 * module that validates with it is evaluated: serve's start never evaluates one
 * (test/layout/start-imports.test.ts), but inside the bin V8 still had to read and pre-parse
 * arktype's code, most of the file, on the way to serve's first answer (bench/README.md,
 * cold-start.ts). CommonJS, so that it is loaded only when required; every name arktype exports
 * is taken from it.
 */
async function arktypeBesideTheBin() {
  await build({
    stdin: { contents: 'export * from "arktype";', resolveDir: ".", loader: "js" },
    outfile: "dist/cli/arktype.cjs",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    logLevel: "warning",
  });
  const names = Object.keys(await import("arktype")).filter((name) => name !== "default");
  return {
    name: "arktype-beside-the-bin",
    setup(build) {
      build.onResolve({ filter: /^arktype$/ }, ({ path }) => ({ path, namespace: "beside" }));
      build.onLoad({ filter: /.*/, namespace: "beside" }, () => ({
        contents: `import { createRequire } from "node:module"; export const { ${names.join(", ")} } = createRequire(import.meta.url)("./arktype.cjs");`,
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
  plugins: [libsqlRequiredNotImported(), await arktypeBesideTheBin()],
  logLevel: "warning",
});
chmodSync("dist/cli/bin.js", 0o755);

mkdirSync("dist/popup", { recursive: true });
copyFileSync("examples/popup/formsink-popup.js", "dist/popup/formsink-popup.js");
