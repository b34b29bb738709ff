import type { Authenticate, Principal } from "../auth/principal.ts";
import type { Answer } from "../http/answer.ts";
import type { ApiRequest } from "../http/request.ts";
import type { NewSubmissionId } from "../id.ts";
import type { Limits } from "../options.ts";
import type { RateLimitSettings } from "../rate-limit/settings.ts";
import type { SubmissionStore } from "../store.ts";
import type { WebhookPolicy } from "../webhook-endpoints.ts";

/** What every route handler gets beside the request; made fresh for each request, never changed. */
export interface RequestContext {
  readonly store: SubmissionStore;
  readonly limits: Limits;
  readonly rateLimits: RateLimitSettings;
  readonly authenticate: Authenticate;
  readonly basePath: string;
  readonly newSubmissionId: () => NewSubmissionId;
  /** What endpoints an account may add. */
  readonly webhooks: WebhookPolicy;
  /** How long the health check waits for the store. */
  readonly healthTimeoutMs: number;
  /** The request's URL, parsed once. */
  readonly url: URL;
  /** The named parts of the route's path, e.g. `submissionId`. */
  readonly params: Readonly<Record<string, string>>;
  /** The caller's network address as the deployment sees it; undefined when unknown. */
  readonly clientAddress: string | undefined;
  /** Called when a rate limit needs the client address and there is none: warns once per handler. */
  readonly warnUnknownClientAddress: (method: string, path: string) => void;
}

/** The context of a route behind the key check: who the key acts for. */
export interface KeyedContext extends RequestContext {
  readonly principal: Principal;
}

export type RouteHandler<Context extends RequestContext = RequestContext> = (
  request: ApiRequest,
  context: Context,
) => Promise<Answer> | Answer;
