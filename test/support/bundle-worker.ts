import { build } from "esbuild";

/** Bundles a Worker's entry module the way Wrangler would: one ES module for workerd. */
export async function bundleWorker(entryPoint: string, options: { minify?: boolean } = {}): Promise<string> {
  const result = await build({
    entryPoints: [entryPoint],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    target: "es2022",
    minify: options.minify,
    logLevel: "error",
  });
  return result.outputFiles[0]!.text;
}
