/**
 * Node adapter: serves any Fetch handler on node:http, with streamed request and response
 * bodies, keep-alive, and a graceful close that lets in-flight requests finish.
 */
import { type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type FetchHandler, type RunningServer, type ServeOptions } from "./server.js";
export type { FetchHandler, RunningServer, ServeOptions } from "./server.js";
export interface NodeServer extends RunningServer {
    server: Server;
}
export declare function serve(handler: FetchHandler, options?: ServeOptions): Promise<NodeServer>;
export interface ListenerHooks {
    onError?: (error: unknown) => void;
    beforeRespond?: (res: ServerResponse) => void;
    afterRespond?: () => void;
}
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
/** A node:http request listener that runs a Fetch handler; for mounting in an existing server. */
export declare function createRequestListener(handler: FetchHandler, hooks?: ListenerHooks): RequestListener;
