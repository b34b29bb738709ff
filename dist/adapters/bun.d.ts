/**
 * Bun adapter: `Bun.serve` runs the handler as it is (Bun speaks Request/Response natively);
 * this only adds the shared options and a graceful close.
 */
import { type FetchHandler, type RunningServer, type ServeOptions } from "./server.ts";
export type { FetchHandler, RunningServer, ServeOptions } from "./server.ts";
export interface BunServer extends RunningServer {
    server: Bun.Server<undefined>;
}
export declare function serve(handler: FetchHandler, options?: ServeOptions): Promise<BunServer>;
