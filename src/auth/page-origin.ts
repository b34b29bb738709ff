/**
 * Where a browser request comes from, and whether a publishable key may be used there. Browsers
 * set `Origin` (and `Referer`) themselves and scripts cannot forge them; a server can send
 * anything, which is why publishable keys also get rate limits.
 */
import type { RequestHead } from "../http/request.ts";

/**
 * The page a request comes from: its `Origin`, else (when that is absent or `null`) its
 * `Referer`. Undefined when neither names an http(s) page.
 */
export function pageUrl(request: RequestHead): URL | undefined {
  const origin = request.headers.get("origin");
  if (origin !== null && origin.trim() !== "null") return httpUrl(origin);
  const referer = request.headers.get("referer");
  return referer === null ? undefined : httpUrl(referer);
}

function httpUrl(text: string): URL | undefined {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  return url && (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "" ? url : undefined;
}

/**
 * True when the page is on one of a key's domains. A domain is a host, optionally with a
 * port: `example.com` is that host on any port, `example.com:8443` only on that port. A
 * leading `*.` covers every subdomain at any depth but not the domain itself:
 * `*.example.com` allows `shop.example.com` and `a.b.example.com`, not `example.com`.
 */
export function isAllowedPage(page: URL, domains: readonly string[]): boolean {
  const host = page.hostname.replace(/\.$/, "");
  const port = page.port || (page.protocol === "https:" ? "443" : "80");
  return domains.some((domain) => {
    const [name = "", domainPort] = domain.split(":");
    if (domainPort !== undefined && domainPort !== port) return false;
    return name.startsWith("*.") ? host.endsWith(name.slice(1)) : host === name;
  });
}

const LABEL = "[a-z0-9](?:[a-z0-9-]*[a-z0-9])?";
const DOMAIN = new RegExp(`^(?=[^:]{1,253}(?::|$))(?:\\*\\.(?=${LABEL}\\.))?${LABEL}(?:\\.${LABEL})*(?::\\d{1,5})?$`);

/**
 * A domain as a key lists it: a lower-case host name or IP address, an optional `*.` in front
 * (the rest must have at least two labels: `*.com` is refused), an optional port.
 */
export function isKeyDomain(text: string): boolean {
  if (!DOMAIN.test(text)) return false;
  const port = text.split(":")[1];
  return port === undefined || Number(port) <= 65535;
}
