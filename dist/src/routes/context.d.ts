import type { IRequest } from "itty-router";
import type { Principal } from "../auth/principal.js";
import type { NewSubmissionId } from "../id.js";
import type { Limits } from "../options.js";
import type { SubmissionStore } from "../store.js";
/** What every route handler gets beside the request; made fresh for each request. */
export interface RequestContext {
    store: SubmissionStore;
    limits: Limits;
    basePath: string;
    url: URL;
    newSubmissionId: () => NewSubmissionId;
    /** Set by the access step that runs before every route. */
    principal?: Principal;
}
export type RouteRequest = IRequest & {
    params: Record<string, string>;
};
export type RouteHandler = (request: RouteRequest, context: RequestContext) => Promise<Response | undefined> | Response | undefined;
/** The principal an access step established; a route without one is a wiring mistake. */
export declare function principalOf(context: RequestContext): Principal;
