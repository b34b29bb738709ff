/**
 * Deno adapter: `Deno.serve` runs the handler as it is; this only adds the shared options and
 * a graceful close. Run with `--allow-net --allow-env --allow-sys --allow-ffi` for the libSQL
 * store (README: what `--allow-ffi` means for the sandbox).
 */
import { type FetchHandler, type RunningServer, type ServeOptions } from "./server.js";
export type { FetchHandler, RunningServer, ServeOptions } from "./server.js";
export interface DenoServer extends RunningServer {
    server: Deno.HttpServer<Deno.NetAddr>;
}
export declare function serve(handler: FetchHandler, options?: ServeOptions): Promise<DenoServer>;
