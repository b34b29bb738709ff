import type { FetchHandler, RunningServer, ServeOptions } from "../adapters/server.ts";

export interface RuntimeServer {
  runtime: "bun" | "deno" | "node";
  serve(handler: FetchHandler, options: ServeOptions): Promise<RunningServer>;
}

/**
 * The server adapter of the runtime this CLI runs in: `Bun.serve` under Bun, `Deno.serve` under
 * Deno, node:http otherwise. Each is loaded only there (the specifier is computed so that no
 * type checker or bundler pulls another runtime's adapter in).
 */
export async function runtimeServer(): Promise<RuntimeServer> {
  const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
  const adapter = (await import(`../adapters/${runtime}.ts`)) as Pick<RuntimeServer, "serve">;
  return { runtime, serve: adapter.serve };
}
