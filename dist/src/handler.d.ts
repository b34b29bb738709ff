import { type SubmissionsHandlerOptions } from "./options.js";
import { type Access } from "./routes/access.js";
import type { RouteHandler } from "./routes/context.js";
import type { SubmissionStore } from "./store.js";
type Method = "GET" | "POST" | "PATCH" | "DELETE";
interface Route {
    method: Method;
    path: string;
    access: Access;
    handle: RouteHandler;
}
/** Every route of the API, in one table: where a newcomer looks first. */
export declare const ROUTES: readonly Route[];
export type SubmissionsHandler = (request: Request) => Promise<Response>;
/**
 * The whole API as one Fetch handler: give it a store, mount it anywhere that speaks
 * `Request`/`Response` (Node via `formsink/node`, Bun, Deno, Workers, a Hono or Next.js route).
 */
export declare function createSubmissionsHandler(store: SubmissionStore, options?: SubmissionsHandlerOptions): SubmissionsHandler;
export {};
