import type { Answer } from "./answer.ts";
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

export const INTERNAL_ERROR_MESSAGE = "Internal server error";

/** The answer for anything thrown while handling a request; unexpected errors become a bare 500. */
export function toErrorAnswer(error: unknown): Answer {
  if (error instanceof HttpError) {
    return jsonAnswer({ message: error.message }, error.status, error.headers);
  }
  return jsonAnswer({ message: INTERNAL_ERROR_MESSAGE }, 500);
}
