import { build, type BuildOptions } from "esbuild";

/** How Wrangler bundles a Worker: one ES module for workerd, with workerd's export conditions. */
export const WORKER_BUILD: BuildOptions = {
  bundle: true,
  write: false,
  format: "esm",
  platform: "neutral",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  target: "es2022",
  logLevel: "error",
};

/** Bundles a Worker's entry module the way Wrangler would. */
export async function bundleWorker(entryPoint: string): Promise<string> {
  const result = await build({ ...WORKER_BUILD, entryPoints: [entryPoint] });
  return result.outputFiles![0]!.text;
}
