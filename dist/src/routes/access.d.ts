import type { Authenticate } from "../auth/principal.js";
import type { RouteHandler } from "./context.js";
/** Which keys may call a route. */
export type Access = "secret" | "create";
/**
 * The step in front of every route: the key must be present, known and unrevoked (401), and of
 * a kind the route accepts (403). It runs before the body is read, so an unauthenticated client
 * cannot make the server buffer anything.
 */
export declare function requireKey(authenticate: Authenticate, access: Access): RouteHandler;
