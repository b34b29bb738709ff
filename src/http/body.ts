import { HttpError } from "./errors.ts";

export interface JsonBodyLimits {
  maxBytes: number;
  /** Deepest nesting of arrays and objects; the body itself is level 1. */
  maxNesting: number;
}

/**
 * Reads a JSON request body, refusing it with 413 as soon as it passes `maxBytes` - while it
 * streams in, not after buffering it all - and with a precise 4xx for anything that is not
 * well-formed JSON in UTF-8.
 */
export async function readJsonBody(request: Request, limits: JsonBodyLimits): Promise<unknown> {
  return (await readJsonBodyAndBytes(request, limits)).value;
}

/** `readJsonBody`, also giving the body's bytes as sent. */
export async function readJsonBodyAndBytes(request: Request, limits: JsonBodyLimits): Promise<{ value: unknown; bytes: Uint8Array }> {
  const contentType = request.headers.get("content-type");
  if (mediaType(contentType) !== "application/json") {
    throw new HttpError(415, "Content-Type must be application/json");
  }
  checkTextEncoding(request);
  const bytes = await readBodyBytes(request, limits.maxBytes);
  const text = decodeUtf8(bytes);
  if (text.trim() === "") throw new HttpError(400, "Request body is empty; expected a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "Request body is not valid JSON");
  }
  checkJsonValue(value, limits.maxNesting);
  return { value, bytes };
}

/** The parsed body as an object, or a 400: every body this API takes is a JSON object. */
export function jsonObject(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "Request body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/**
 * Refuses a body that would be misread: a charset other than UTF-8, or a compressed body
 * (which would be taken for garbled text).
 */
export function checkTextEncoding(request: Request): void {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers.get("content-type") ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw new HttpError(415, `Content-Type charset must be utf-8 (got ${charset || "an empty one"})`);
  }
  const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    throw new HttpError(415, `Content-Encoding ${encoding} is not supported; send the body uncompressed`);
  }
}

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new HttpError(400, "Request body is not valid UTF-8");
  }
}

/**
 * A request whose adapter can give its whole body without a web stream (formsink/node: making
 * a ReadableStream costs ~10 us in Node, as much as a raw server spends on a whole request).
 */
export interface DirectBody {
  /**
   * Reads the body to its end; resolves with undefined, and drops the rest, as soon as it passes
   * `maxBytes`. Throws a TypeError when the body was read before.
   */
  [READ_WHOLE_BODY](maxBytes: number): Promise<Uint8Array<ArrayBuffer> | undefined>;
}

export const READ_WHOLE_BODY: unique symbol = Symbol.for("formsink.readWholeBody");

/** The body's bytes, refused with 413 as soon as they pass `maxBytes`. */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const tooLarge = () => new HttpError(413, `Request body must be at most ${maxBytes} bytes`);
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge();
  if (READ_WHOLE_BODY in request) {
    const bytes = await (request as Request & DirectBody)[READ_WHOLE_BODY](maxBytes);
    if (bytes === undefined) throw tooLarge();
    return bytes;
  }
  if (request.body === null) return new Uint8Array(0);

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** `type/subtype` of a Content-Type header, lower-cased, without parameters. */
export function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
}

interface Visit {
  value: unknown;
  key: string;
  depth: number;
  parent: Visit | undefined;
}

/**
 * Refuses what no schema should ever see:
 * - nesting past `maxNesting`: a few KB of brackets nest thousands of levels, and validators
 *   and serialisers recurse (arktype describes the value it refuses);
 * - lone UTF-16 surrogates smuggled in through JSON escapes: SQLite would store them as
 *   U+FFFD, silently changing the data.
 * The walk keeps its own stack, and each entry only a link to its parent, so neither the call
 * stack nor path strings grow with the depth.
 */
export function checkJsonValue(root: unknown, maxNesting: number, what = "Request body"): void {
  const pending: Visit[] = [{ value: root, key: "", depth: 0, parent: undefined }];
  for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
    if (typeof visit.value === "string") {
      if (!visit.value.isWellFormed()) throw illFormedText(visit, what);
      continue;
    }
    if (typeof visit.value !== "object" || visit.value === null) continue;
    const depth = visit.depth + 1;
    if (depth > maxNesting) throw new HttpError(400, `${what} is nested more than ${maxNesting} levels deep`);
    for (const [key, value] of Object.entries(visit.value)) {
      const child = { value, key, depth, parent: visit };
      if (!key.isWellFormed()) throw illFormedText(child, what);
      pending.push(child);
    }
  }
}

function illFormedText(visit: Visit, what: string): HttpError {
  const keys: string[] = [];
  for (let at: Visit | undefined = visit; at?.parent !== undefined; at = at.parent) keys.push(at.key);
  return new HttpError(400, `${what} has text that is not valid Unicode (a lone surrogate) at ${keys.reverse().join(".") || "the top level"}`);
}
