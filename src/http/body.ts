import { HttpError } from "./errors.ts";

/**
 * Reads a JSON request body, refusing it with 413 as soon as it passes `maxBytes` - while it
 * streams in, not after buffering it all - and with a precise 4xx for anything that is not
 * well-formed JSON in UTF-8.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  if (mediaType(request.headers.get("content-type")) !== "application/json") {
    throw new HttpError(415, "Content-Type must be application/json");
  }
  const text = await readBodyText(request, maxBytes);
  if (text.trim() === "") throw new HttpError(400, "Request body is empty; expected a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, "Request body is not valid JSON");
  }
  const illFormedAt = findIllFormedText(value, "");
  if (illFormedAt !== undefined) {
    throw new HttpError(400, `Request body has text that is not valid Unicode (a lone surrogate) at ${illFormedAt || "the top level"}`);
  }
  return value;
}

export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const tooLarge = () => new HttpError(413, `Request body must be at most ${maxBytes} bytes`);
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge();
  if (request.body === null) return "";

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
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new HttpError(400, "Request body is not valid UTF-8");
  }
}

/** `type/subtype` of a Content-Type header, lower-cased, without parameters. */
export function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
}

// JSON escapes can smuggle lone UTF-16 surrogates into strings; SQLite would store them as
// U+FFFD, silently changing the data, so they are refused up front.
function findIllFormedText(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return value.isWellFormed() ? undefined : path;
  if (typeof value !== "object" || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = path === "" ? key : `${path}.${key}`;
    if (!key.isWellFormed()) return at;
    const found = findIllFormedText(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
