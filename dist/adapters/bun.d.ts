/**
 * Bun adapter: `Bun.serve` runs the handler as it is (Bun speaks Request/Response natively);
 * this only adds the shared options and a graceful close.
 */
import { type FetchHandler, type RunningServer, type ServeOptions } from "./server.js";
export type { FetchHandler, RunningServer, ServeOptions } from "./server.js";
export interface BunServer extends RunningServer {
    server: Bun.Server<undefined>;
}
export declare function serve(handler: FetchHandler, options?: ServeOptions): Promise<BunServer>;
