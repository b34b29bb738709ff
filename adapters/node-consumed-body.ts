/**
 * A request body another middleware already read (Express's `express.json()`, any body parser
 * mounted before formsink) cannot be read again: waiting for it would hang. The handler answers
 * such a request at once (`bodyReadByHost`), and the listener says once in the log how to mount
 * formsink instead.
 */
import type { IncomingMessage } from "node:http";

/**
 * Whether the body of `req` was read, wholly or in part, before formsink saw it. Node's own
 * flags are the signal, whatever read it: `readableDidRead` once any data was taken,
 * `readableEnded` once the end was (body-parser's on-finished checks the same).
 */
export function bodyAlreadyRead(req: IncomingMessage): boolean {
  if (req.method === "GET" || req.method === "HEAD") return false;
  return req.readableDidRead || req.readableEnded;
}

/** The log line for the host app's developer: what happened, and where the fix is. */
export function consumedBodyError(req: IncomingMessage): Error {
  const parsed = (req as { body?: unknown }).body !== undefined ? " (req.body is set: a body parser ran)" : "";
  return new Error(
    `formsink: the body of ${req.method} ${originalUrl(req)} was read before formsink got it${parsed}; ` +
      "mount formsink before express.json(), express.urlencoded() or any other body parser, or on a router without them (docs/host-apps.md)",
  );
}

/**
 * The URL path as the client sent it. Express and Connect strip a mount prefix from `req.url`
 * (`app.use("/forms", listener)`) and keep the whole one in `req.originalUrl`; the handler's
 * `basePath` is the prefix, so it needs the whole path.
 */
export function originalUrl(req: IncomingMessage): string {
  const original = (req as { originalUrl?: unknown }).originalUrl;
  return typeof original === "string" ? original : (req.url ?? "/");
}
