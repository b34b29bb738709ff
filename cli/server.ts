import type { FetchHandler, RunningServer, ServeOptions } from "../adapters/server.ts";

export interface RuntimeServer {
  runtime: "bun" | "deno" | "node";
  serve(handler: FetchHandler, options: ServeOptions): Promise<RunningServer>;
}

/**
 * The server adapter of the runtime this CLI runs in: `Bun.serve` under Bun, `Deno.serve` under
 * Deno, node:http otherwise. Each is loaded only there: the specifier is computed so that no
 * type checker pulls another runtime's adapter in. The CLI's bundle holds every file of
 * adapters/ (esbuild bundles what the pattern matches), each evaluated only when imported, so
 * none may import a package at its top level that a start should not load (workers.ts imports
 * @libsql/client/web inside the function that needs it).
 */
export async function runtimeServer(): Promise<RuntimeServer> {
  const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
  const adapter = (await import(`../adapters/${runtime}.ts`)) as Pick<RuntimeServer, "serve">;
  return { runtime, serve: adapter.serve };
}
