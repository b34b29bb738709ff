import type { Answer } from "./answer.ts";
import { StoreUnavailable } from "../store.ts";
import { jsonAnswer } from "./json.ts";

/**
 * An answer thrown to leave a route early: anywhere below the router, and turned into
 * `{"message": ...}` with its status in exactly one place (`toErrorAnswer`). Deliberately not
 * an `Error`: it is what the client gets, not a failure to trace, and an `Error` captures a
 * stack trace when it is made, a large share of what a 401 or a 404 costs.
 */
export class HttpError {
  readonly name = "HttpError";
  readonly status: number;
  readonly message: string;
  /** Added to the answer; lower-case names. */
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    this.status = status;
    this.message = message;
    this.headers = headers;
  }
}

/**
 * A body that stopped arriving (the client aborted its upload or lost its connection): the
 * client's doing, so a 400 that nobody may receive, never a logged server error.
 */
export function bodyCutShort(): HttpError {
  return new HttpError(400, "The request body ended before it was complete");
}

export const CONSUMED_BODY_MESSAGE =
  "The request body was already read by the host app (a body parser such as express.json() runs before formsink); mount formsink before any body parser";

/**
 * A body the host app read before the handler got it (a body parser, Hono's `c.req.json()`)
 * cannot be read again. The host app's wiring is at fault, not the client, so a 500; its
 * message names the fix, as an unexpected error's would not.
 */
export function bodyReadByHost(): HttpError {
  return new HttpError(500, CONSUMED_BODY_MESSAGE);
}

export const INTERNAL_ERROR_MESSAGE = "Internal server error";

/**
 * How long a client is told to wait after a storage fault: long enough for a lock held by
 * another process or an operator's fix, short enough that a popup's retry still succeeds.
 */
const STORE_RETRY_AFTER_SECONDS = "5";

/**
 * The answer for anything thrown while handling a request: a storage fault gets its own status
 * (507 when the disk is full, else 503) and message; unexpected errors become a bare 500.
 */
export function toErrorAnswer(error: unknown): Answer {
  if (error instanceof HttpError) {
    return jsonAnswer({ message: error.message }, error.status, error.headers);
  }
  if (error instanceof StoreUnavailable) {
    return jsonAnswer({ message: error.message }, error.kind === "full" ? 507 : 503, { "retry-after": STORE_RETRY_AFTER_SECONDS });
  }
  return jsonAnswer({ message: INTERNAL_ERROR_MESSAGE }, 500);
}
