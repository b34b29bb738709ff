/**
 * How a delivery reaches its receiver. A transport posts one request and answers the status
 * code; it throws when no answer came, with a message for the delivery log (never a secret).
 * It follows no redirect: a 3xx answer is a failed attempt like any other that is not 2xx.
 *
 * Every transport checks the URL against the server-side request forgery rules first
 * (`checkDeliveryUrl`); the Node, Bun and Deno one (formsink/node) also checks every address a
 * name resolves to, when it connects.
 */
import { blockedAddressReason, isIpLiteral } from "./addresses.ts";

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** No answer within this long is a failed attempt. */
  timeoutMs: number;
}

export interface WebhookResponse {
  status: number;
}

export type WebhookTransport = ((request: WebhookRequest) => Promise<WebhookResponse>) & {
  /**
   * HMAC-SHA256 of `content` keyed with `key`, in base64, where the runtime has a cheaper one
   * than WebCrypto's (whose every call is a job and a promise); signing uses WebCrypto without it.
   */
  readonly hmacSha256?: (key: Uint8Array, content: string) => string;
};

export interface WebhookTransportOptions {
  /**
   * Allows `http` URLs and loopback, private and link-local addresses: for local work only
   * (`formsink serve --allow-private-webhooks`). Default false.
   */
  allowPrivate?: boolean;
}

/**
 * What lifts a refusal that `allowPrivate` lifts, named in the delivery log: a transport left at
 * its default refuses every delivery to a receiver that the handler (`allowPrivateWebhooks`)
 * let an account add, and nothing else would say which setting is missing.
 */
const LIFTED_BY_ALLOW_PRIVATE =
  "the delivery transport's allowPrivate option lifts that for local work (formsink serve: --allow-private-webhooks or FORMSINK_ALLOW_PRIVATE_WEBHOOKS=1)";

/** A delivery the forgery rules forbid; its message is what the delivery log shows. */
export class WebhookRefused extends Error {
  override name = "WebhookRefused";
  /** What is refused, without the advice: `only https URLs are delivered to`. */
  readonly reason: string;

  constructor(reason: string, options: { liftedByAllowPrivate?: boolean } = {}) {
    super(`refused: ${reason}${options.liftedByAllowPrivate ? `; ${LIFTED_BY_ALLOW_PRIVATE}` : ""}`);
    this.reason = reason;
  }
}

/** Names that always mean this machine or its cloud's metadata service, whatever DNS says. */
const LOCAL_NAMES = /(^|\.)localhost\.?$|^metadata\.google\.internal\.?$/i;

/**
 * The URL, parsed, when the rules allow delivering to it as far as it alone tells: an `https`
 * URL (or `http` when private addresses are allowed) whose host is not a refused IP literal or
 * a local name. A name's addresses are checked where it is resolved.
 */
export function checkDeliveryUrl(url: string, options: WebhookTransportOptions = {}): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebhookRefused("the URL does not parse");
  }
  const allowPrivate = options.allowPrivate ?? false;
  if (parsed.protocol !== "https:" && !(allowPrivate && parsed.protocol === "http:")) {
    throw allowPrivate
      ? new WebhookRefused("only http and https URLs are delivered to")
      : new WebhookRefused("only https URLs are delivered to", { liftedByAllowPrivate: parsed.protocol === "http:" });
  }
  if (allowPrivate) return parsed;
  const host = parsed.hostname;
  if (isIpLiteral(host)) {
    const reason = blockedAddressReason(host);
    if (reason) throw new WebhookRefused(`${host} is ${reason}`, { liftedByAllowPrivate: true });
  } else if (LOCAL_NAMES.test(host)) {
    throw new WebhookRefused(`${host} names this machine`, { liftedByAllowPrivate: true });
  }
  return parsed;
}

/** The message for the delivery log of a transport's failure. */
export function attemptError(error: unknown, timeoutMs: number): string {
  if (error instanceof WebhookRefused) return error.message;
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return `no answer within ${timeoutMs / 1000} s`;
  // Node names a network error by its code (ECONNREFUSED), fetch by its cause's.
  const code = (value: unknown) => (typeof (value as { code?: unknown })?.code === "string" ? (value as { code: string }).code : undefined);
  const detail = code(error) ?? code((error as { cause?: unknown })?.cause) ?? (error instanceof Error ? error.message : String(error));
  return `could not reach the receiver: ${detail}`;
}

/**
 * A transport over `fetch`, for Workers (and any runtime without node:http): checks the URL
 * itself; the addresses a name resolves to are up to the platform (docs/webhooks.md says what
 * Cloudflare blocks).
 */
export function createFetchWebhookTransport(options: WebhookTransportOptions & { fetch?: typeof fetch } = {}): WebhookTransport {
  const fetchOf = options.fetch ?? ((input, init) => fetch(input, init));
  return async (request) => {
    const url = checkDeliveryUrl(request.url, options);
    const response = await fetchOf(url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    await response.body?.cancel().catch(() => undefined);
    return { status: response.status };
  };
}
