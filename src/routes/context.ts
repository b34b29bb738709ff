import type { Authenticate, Principal } from "../auth/principal.ts";
import type { Answer } from "../http/answer.ts";
import type { ApiRequest } from "../http/request.ts";
import type { NewSubmissionId } from "../id.ts";
import type { Limits } from "../options.ts";
import type { RateLimitSettings } from "../rate-limit/settings.ts";
import type { SubmissionStore } from "../store.ts";
import type { WebhookPolicy } from "../webhook-endpoints.ts";

/** What every route handler gets beside the request; made fresh for each request, never changed. */
export interface RequestContext extends HandlerSettings {
  /** The request's URL, parsed once, when first read. */
  readonly url: URL;
  /** Whether the URL has a query (`url.search` is not empty), known without parsing it. */
  readonly hasQuery: boolean;
  /** The named parts of the route's path, e.g. `submissionId`. */
  readonly params: Readonly<Record<string, string>>;
  /** The caller's network address as the deployment sees it; undefined when unknown. */
  readonly clientAddress: string | undefined;
  /** This context with the principal the key check found: what a route behind it gets. */
  withPrincipal(principal: Principal): KeyedContext;
}

/** What a handler made of its options: the same in every request's context. */
export interface HandlerSettings {
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
  /** Called when a rate limit needs the client address and there is none: warns once per handler. */
  readonly warnUnknownClientAddress: (method: string, path: string) => void;
}

/** The context of a route behind the key check: who the key acts for. */
export interface KeyedContext extends RequestContext {
  readonly principal: Principal;
}

// bench/http.ts (get): copying the settings into each request's context by object spreads (the
// context and its keyed copy), and parsing a URL that a get's routing and key check do not read,
// were the largest parts of the handler's own work on a get.
/** A request's context: the handler's settings, its route's parameters, its URL parsed when first read. */
export class HandlerContext implements RequestContext {
  readonly params: Readonly<Record<string, string>>;
  readonly clientAddress: string | undefined;
  readonly #href: string;
  #url: URL | undefined;

  /**
   * `href`: the request's URL as it came, with `url` parsed from it, or undefined when it is an
   * origin and a plain path (`plainPathOf`), which has no query.
   */
  constructor(settings: HandlerSettings, href: string, url: URL | undefined, params: Readonly<Record<string, string>>, clientAddress: string | undefined) {
    const own: { -readonly [Name in keyof HandlerSettings]: HandlerSettings[Name] } = this;
    own.store = settings.store;
    own.limits = settings.limits;
    own.rateLimits = settings.rateLimits;
    own.authenticate = settings.authenticate;
    own.basePath = settings.basePath;
    own.newSubmissionId = settings.newSubmissionId;
    own.webhooks = settings.webhooks;
    own.healthTimeoutMs = settings.healthTimeoutMs;
    own.warnUnknownClientAddress = settings.warnUnknownClientAddress;
    this.params = params;
    this.clientAddress = clientAddress;
    this.#href = href;
    this.#url = url;
  }

  get url(): URL {
    return (this.#url ??= new URL(this.#href));
  }

  get hasQuery(): boolean {
    return this.#url !== undefined && this.#url.search !== "";
  }

  withPrincipal(principal: Principal): KeyedContext {
    return new KeyedHandlerContext(this, this.#href, this.#url, principal);
  }
}

/** The settings' fields, declared once in HandlerSettings, are the class's too (set in its constructor). */
export interface HandlerContext extends HandlerSettings {}

class KeyedHandlerContext extends HandlerContext implements KeyedContext {
  readonly principal: Principal;

  constructor(context: HandlerContext, href: string, url: URL | undefined, principal: Principal) {
    super(context, href, url, context.params, context.clientAddress);
    this.principal = principal;
  }
}

export type RouteHandler<Context extends RequestContext = RequestContext> = (
  request: ApiRequest,
  context: Context,
) => Promise<Answer> | Answer;
