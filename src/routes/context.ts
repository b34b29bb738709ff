import type { IRequest } from "itty-router";
import type { Principal } from "../auth/principal.ts";
import type { Answer } from "../http/answer.ts";
import type { NewSubmissionId } from "../id.ts";
import type { Limits } from "../options.ts";
import type { RateLimitSettings } from "../rate-limit/settings.ts";
import type { SubmissionStore } from "../store.ts";
import type { CreateRequest } from "./create-request.ts";

/** What every route handler gets beside the request; made fresh for each request. */
export interface RequestContext {
  store: SubmissionStore;
  limits: Limits;
  rateLimits: RateLimitSettings;
  basePath: string;
  url: URL;
  newSubmissionId: () => NewSubmissionId;
  /** The caller's network address as the deployment sees it; undefined when unknown. */
  clientAddress: string | undefined;
  /** Called when a rate limit needs the client address and there is none: warns once per handler. */
  warnUnknownClientAddress: (method: string, path: string) => void;
  /** Added to whatever answers this request, errors included (CORS, rate-limit state); lower-case names. */
  responseHeaders: Record<string, string>;
  /** Set by the access step that runs before every keyed route. */
  principal?: Principal;
  /** Names the caller's key in rate-limit buckets (its id, or a hash): never the key itself. */
  keyName?: string;
  /** The body of a create, once read: the access step reads it first when the key is a form field. */
  createRequest?: CreateRequest;
}

export type RouteRequest = IRequest & { params: Record<string, string> };

export type RouteHandler = (request: RouteRequest, context: RequestContext) => Promise<Answer | undefined> | Answer | undefined;

/** The principal an access step established; a route without one is a wiring mistake. */
export function principalOf(context: RequestContext): Principal {
  if (!context.principal) throw new Error("route reached without an access step");
  return context.principal;
}
