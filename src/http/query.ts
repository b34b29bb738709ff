import { HttpError } from "./errors.ts";
import { decodeUrlencoded } from "./form.ts";

/**
 * The known query parameters of a URL as single strings. A known parameter given twice is
 * refused (which one would win is a guess); unknown ones are ignored, as the contract says.
 */
export function singleValuedQuery(url: URL, known: readonly string[]): Record<string, string> {
  const query: Record<string, string> = {};
  for (const name of known) {
    const values = url.searchParams.getAll(name);
    if (values.length > 1) throw new HttpError(400, `Query parameter ${name} must be given at most once`);
    if (values.length === 1) {
      // URLSearchParams turns escapes that are not UTF-8 (`%FF`) into U+FFFD: a filter would then
      // match other text than was sent. Only a value holding U+FFFD can hide one, so only it is re-read.
      if (values[0]!.includes("\uFFFD")) refuseBadEscapes(url, name);
      query[name] = values[0]!;
    }
  }
  return query;
}

/** Throws when a value of the parameter `name` in `url`'s query is not URL-encoded UTF-8. */
function refuseBadEscapes(url: URL, name: string): void {
  for (const pair of url.search.slice(1).split("&")) {
    const equals = pair.indexOf("=");
    const [rawName, rawValue] = equals === -1 ? [pair, ""] : [pair.slice(0, equals), pair.slice(equals + 1)];
    if (decodeUrlencoded(rawName) === name && decodeUrlencoded(rawValue) === undefined) {
      throw new HttpError(400, `Query parameter ${name} is not valid URL-encoded UTF-8`);
    }
  }
}
