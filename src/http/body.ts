import type { Limits } from "../options.ts";
import { HttpError } from "./errors.ts";
import type { ApiRequest, RequestHead } from "./request.ts";

// Room above the data depth limit, so that a body a little too deep still gets the precise
// message of checkSubmissionData; only pathological nesting meets the body's own limit.
const MAX_NESTING_SLACK = 16;

/**
 * Reads a JSON request body, refusing it with 413 as soon as it passes the body limit - while
 * it streams in, not after buffering it all - and with a precise 4xx for anything that is not
 * well-formed JSON in UTF-8.
 */
export async function readJsonBody(request: ApiRequest, limits: Limits): Promise<unknown> {
  return (await readJsonBodyAndBytes(request, limits)).value;
}

/** `readJsonBody`, also giving the body's bytes as sent. */
export async function readJsonBodyAndBytes(request: ApiRequest, limits: Limits): Promise<{ value: unknown; bytes: Uint8Array }> {
  const contentType = request.headers.get("content-type");
  if (mediaType(contentType) !== "application/json") {
    throw new HttpError(415, "Content-Type must be application/json");
  }
  checkTextEncoding(request);
  const bytes = await readBodyBytes(request, limits.maxBodyBytes);
  const text = decodeUtf8(bytes);
  if (text.trim() === "") throw new HttpError(400, "Request body is empty; expected a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "Request body is not valid JSON");
  }
  checkJsonValue(value, limits.maxDataDepth + MAX_NESTING_SLACK);
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
export function checkTextEncoding(request: RequestHead): void {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers.get("content-type") ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw new HttpError(415, `Content-Type charset must be utf-8 (got ${charset || "an empty one"})`);
  }
  const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    throw new HttpError(415, `Content-Encoding ${encoding} is not supported; send the body uncompressed`);
  }
}

/**
 * One decoder for every body: a call without `stream` starts afresh, so nothing of one body
 * reaches the next, and making a decoder costs about as much as decoding a small body.
 */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new HttpError(400, "Request body is not valid UTF-8");
  }
}

/** The body's bytes, refused with 413 as soon as they pass `maxBytes`. */
export async function readBodyBytes(request: ApiRequest, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = request.headers.get("content-length");
  const bytes = declared !== null && Number(declared) > maxBytes ? undefined : await request.readBody(maxBytes);
  if (bytes === undefined) throw new HttpError(413, `Request body must be at most ${maxBytes} bytes`);
  return bytes;
}

/** `type/subtype` of a Content-Type header, lower-cased, without parameters. */
export function mediaType(contentType: string | null): string {
  // bench/http.ts (create): a create reads its Content-Type three times, almost always sent as is.
  if (contentType === "application/json") return contentType;
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
