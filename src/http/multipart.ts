/**
 * `multipart/form-data` (RFC 7578) for a body already in memory (at most the body limit).
 * Not `Response.formData()`: runtimes disagree on it - Bun turns an empty file input into a
 * file, workerd into text, Deno takes a body without its boundary for an empty form - and all
 * of them replace bytes that are not UTF-8 instead of refusing them.
 */
import { decodeUtf8 } from "./body.ts";
import { HttpError } from "./errors.ts";

export interface MultipartField {
  name: string;
  /** Set for a file part (it had a `filename`). */
  filename?: string;
  content: Uint8Array;
}

const CRLF = [0x0d, 0x0a];
const DASH = 0x2d;
const encoder = new TextEncoder();

export function parseMultipart(bytes: Uint8Array, contentType: string): MultipartField[] {
  const boundary = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s"]{1,70}))/i.exec(contentType);
  if (!boundary) throw malformed("the Content-Type has no boundary");
  const delimiter = encoder.encode(`--${boundary[1] ?? boundary[2]}`);
  const nextDelimiter = Uint8Array.from([...CRLF, ...delimiter]);

  const first = indexOf(bytes, delimiter, 0);
  if (first === -1) throw malformed("the boundary never occurs");
  const fields: MultipartField[] = [];
  let at = first + delimiter.length;
  for (;;) {
    if (bytes[at] === DASH && bytes[at + 1] === DASH) return fields; // the closing delimiter
    while (bytes[at] === 0x20 || bytes[at] === 0x09) at++; // transport padding
    if (bytes[at] !== CRLF[0] || bytes[at + 1] !== CRLF[1]) throw malformed("a boundary is not followed by a line break");
    const headersEnd = indexOf(bytes, Uint8Array.from([...CRLF, ...CRLF]), at);
    if (headersEnd === -1) throw malformed("a part's headers never end");
    const end = indexOf(bytes, nextDelimiter, headersEnd + 4);
    if (end === -1) throw malformed("the body ends before its closing boundary");
    fields.push(part(decodeUtf8(bytes.subarray(at + 2, headersEnd)), bytes.subarray(headersEnd + 4, end)));
    at = end + nextDelimiter.length;
  }
}

function part(headerText: string, content: Uint8Array): MultipartField {
  const disposition = headerText
    .split("\r\n")
    .find((line) => /^content-disposition\s*:/i.test(line))
    ?.replace(/^[^:]*:\s*/, "");
  if (!disposition || !/^form-data\b/i.test(disposition)) throw malformed("a part has no Content-Disposition: form-data");
  const parameters = dispositionParameters(disposition.slice("form-data".length));
  const name = parameters.get("name");
  if (name === undefined) throw malformed("a part has no name");
  const filename = parameters.get("filename") ?? parameters.get("filename*");
  return filename === undefined ? { name, content } : { name, filename, content };
}

// A parameter is `; name = value`, the value a token or a quoted-string (RFC 7578, 4.2; RFC
// 6266, 4.1; RFC 9110, 5.6.4), so a `name=` inside a quoted filename is part of that filename.
const PARAMETER = /\s*;\s*([^\s;=]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|"([^"]*)"|([^;\s"]*))/y;

/**
 * The parameters after `form-data`, by lower-case name (the first of each wins). In a quoted
 * value a backslash escapes `"` and `\`; before any other character it is kept, and a value
 * that only closes when its backslashes are taken as written is read so, because browsers do
 * not escape backslashes in field names (they write a `"` as %22).
 */
function dispositionParameters(text: string): Map<string, string> {
  const parameters = new Map<string, string>();
  PARAMETER.lastIndex = 0;
  for (let match = PARAMETER.exec(text); match; match = PARAMETER.exec(text)) {
    const name = match[1]!.toLowerCase();
    const value = match[2] !== undefined ? match[2].replace(/\\(["\\])/g, "$1") : (match[3] ?? match[4]!);
    if (!parameters.has(name)) parameters.set(name, value);
  }
  return parameters;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const last = haystack.length - needle.length;
  outer: for (let i = from; i <= last; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function malformed(reason: string): HttpError {
  return new HttpError(400, `Request body is not valid multipart/form-data: ${reason}`);
}
