/**
 * A request's id: the client's (or proxy's) `x-request-id` when it is a plausible one, else a
 * fresh UUID. It is echoed on the answer and written in the log line, so a user's report, a
 * proxy's log and formsink's log can be matched up. Anything else (control characters, spaces,
 * a header longer than `MAX_REQUEST_ID_LENGTH`) is replaced: it would end up in log files.
 */
import type { RequestHead } from "./request.ts";

export const MAX_REQUEST_ID_LENGTH = 128;

const PLAUSIBLE_ID = new RegExp(`^[\\x21-\\x7e]{1,${MAX_REQUEST_ID_LENGTH}}$`);

export function requestIdOf(request: RequestHead): string {
  const given = request.headers.get("x-request-id");
  return given !== null && PLAUSIBLE_ID.test(given) ? given : crypto.randomUUID();
}
