/**
 * A URL's path read without the URL parser, where the parser would leave it as it is. An
 * adapter that makes each request's URL (formsink/node) writes one of these for an ordinary
 * request, and the handler routes on its path without parsing it again.
 */

/**
 * The characters of a path that the URL parser leaves as they are: none that starts a dot
 * segment (`.`, and `%` for its encoded form) or a query or fragment, no backslash (a slash to
 * the parser), nothing it percent-encodes (spaces, quotes, `<`, `>`, `` ` ``, braces, `|`,
 * control and non-ASCII characters). For a character class in a regular expression.
 */
export const PLAIN_PATH_CHARACTERS = "A-Za-z0-9_~!$&'()*+,;=:@\\/-";

/** A path of PLAIN_PATH_CHARACTERS. */
const PLAIN_PATH = new RegExp(`^/[${PLAIN_PATH_CHARACTERS}]*$`);
/** An http(s) origin as written: scheme, `//` and a non-empty authority, which holds no path, query or fragment. */
const ORIGIN = /^https?:\/\/[^/?#\\]+$/;

/** Origins the URL parser has taken; a few, as a server is reached by a few names. */
const PARSED_ORIGINS = new Set<string>();
const MAX_PARSED_ORIGINS = 16;

/**
 * The path of `href` as `new URL(href).pathname` has it, and the knowledge that `new URL(href)`
 * succeeds with an empty `search`, when `href` is an origin the parser takes followed by a
 * plain path, without query or fragment; undefined for any other `href`, which is then parsed.
 */
export function plainPathOf(href: string): string | undefined {
  const schemeEnd = href.startsWith("http://") ? 7 : href.startsWith("https://") ? 8 : 0;
  const pathStart = schemeEnd === 0 ? -1 : href.indexOf("/", schemeEnd);
  if (pathStart === -1) return undefined;
  const path = href.slice(pathStart);
  if (!PLAIN_PATH.test(path)) return undefined;
  const origin = href.slice(0, pathStart);
  if (!PARSED_ORIGINS.has(origin)) {
    if (!ORIGIN.test(origin) || !URL.canParse(`${origin}/`)) return undefined;
    if (PARSED_ORIGINS.size >= MAX_PARSED_ORIGINS) PARSED_ORIGINS.clear();
    PARSED_ORIGINS.add(origin);
  }
  return path;
}
