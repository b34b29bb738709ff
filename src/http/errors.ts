import type { Answer } from "./answer.ts";
import { jsonAnswer } from "./json.ts";

/**
 * An error that is an answer: thrown anywhere below the router and turned into
 * `{"message": ...}` with its status in exactly one place (`toErrorAnswer`).
 */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "HttpError";
    this.status = status;
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
