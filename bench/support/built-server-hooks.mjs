/** The module hooks built-server.mjs registers in a benchmark's server process. */
import { readFileSync } from "node:fs";
import { transformSync } from "esbuild";

const ROOT = new URL("../../", import.meta.url).href;
/** src/ and adapters/ are what `npm run build` emits to dist/, one module per file. */
const BUILT = /^(src|adapters)\/.*\.ts$/;

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith(ROOT)) return resolved;
  const path = resolved.url.slice(ROOT.length);
  if (!BUILT.test(path)) return resolved;
  return { ...resolved, url: `${ROOT}dist/${path.slice(0, -".ts".length)}.js`, format: "module" };
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return nextLoad(url, context);
  const source = readFileSync(new URL(url), "utf8");
  const { code } = transformSync(source, { loader: "ts", format: "esm", target: `node${process.versions.node}`, sourcefile: url });
  return { format: "module", source: code, shortCircuit: true };
}
