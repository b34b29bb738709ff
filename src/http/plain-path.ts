/**
 * A URL's path read without the URL parser, where the parser would leave it as it is. An
 * adapter that makes each request's URL (formsink/node) writes one of these for an ordinary
 * request and hands its path over (`ApiRequest#plainPath`); for any other request the handler
 * finds the path here, and routes on it without parsing the URL.
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
/** An origin's authority as written: non-empty, and holding no path, query or fragment. */
const AUTHORITY = /^[^/?#\\]+$/;

/**
 * Each authority the URL parser has taken, as written, with the origin it parsed it to, by
 * scheme; a few, as a server is reached by a few names. Keyed by the authority alone, so that
 * the Node adapter looks a request's Host header up as it is, without making a string of it.
 */
const PARSED_ORIGINS = { http: new Map<string, string>(), https: new Map<string, string>() };
const MAX_PARSED_ORIGINS = 16;

/**
 * The origin the URL parser makes of `scheme://authority` (lower-cased, a default port dropped,
 * an IPv4 address in its usual form); undefined when it does not take that as an origin. Each
 * one is parsed once.
 */
export function parsedOrigin(scheme: "http" | "https", authority: string): string | undefined {
  const parsedOrigins = PARSED_ORIGINS[scheme];
  let parsed = parsedOrigins.get(authority);
  if (parsed === undefined) {
    const written = `${scheme}://${authority}`;
    if (!AUTHORITY.test(authority) || !URL.canParse(written)) return undefined;
    parsed = new URL(written).origin;
    if (parsedOrigins.size >= MAX_PARSED_ORIGINS) parsedOrigins.clear();
    parsedOrigins.set(authority, parsed);
  }
  return parsed;
}

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
  return PLAIN_PATH.test(path) && parsedOrigin(schemeEnd === 7 ? "http" : "https", href.slice(schemeEnd, pathStart)) !== undefined ? path : undefined;
}
