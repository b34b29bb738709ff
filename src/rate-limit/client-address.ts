/**
 * Where a request comes from, for rate limits. A Fetch handler has no socket: the adapter that
 * runs it passes the connection's address (`handler(request, { clientAddress })`), and a
 * deployment behind a proxy says which forwarded address to believe. Headers a client can
 * write, such as X-Forwarded-For, are never believed unless a deployment asks for it.
 */
import type { RequestHead } from "../http/request.ts";

/** What an adapter knows about the connection a request came in on. */
export interface ConnectionInfo {
  /**
   * The peer's IP address (IPv4, or IPv6 without brackets). `undefined` is allowed as well as
   * leaving it out: what host frameworks give (`req.socket.remoteAddress`, Hono's `getConnInfo`)
   * may be undefined.
   */
  clientAddress?: string | undefined;
}

/**
 * Picks the client's address for a request (its method, URL and headers, as a Fetch `Request`
 * has them); undefined when it cannot be known.
 */
export type ClientAddressSource = (request: RequestHead, connection: ConnectionInfo) => string | undefined;

/** The default: the address of the connection, as the adapter reports it. */
export const connectionAddress: ClientAddressSource = (_request, connection) => connection.clientAddress;

/**
 * For deployments behind `trustedProxies` reverse proxies that each append the address they
 * saw to X-Forwarded-For: the address the outermost trusted proxy saw. Entries further left
 * were written by the client and are ignored. A request with fewer entries than that did not
 * come through every proxy; its leftmost known address is used. A host that passes no connection
 * address (a Next.js route handler) counts the same way, as if it had passed the nearest proxy's.
 */
export function forwardedForAddress(trustedProxies: number): ClientAddressSource {
  if (!Number.isInteger(trustedProxies) || trustedProxies < 1) {
    throw new TypeError(`trustedProxies must be a whole number of at least 1 (got ${trustedProxies})`);
  }
  return (request, connection) => {
    const forwarded = (request.headers.get("x-forwarded-for") ?? "").split(",").map((entry) => entry.trim()).filter(Boolean);
    // Without the connection's address (a Fetch route handler sees no socket), the request still
    // came from the nearest proxy: its entry is the last one, and the client's is counted from it.
    const hops = [...forwarded, connection.clientAddress];
    return hops[Math.max(0, hops.length - 1 - trustedProxies)];
  };
}

/**
 * The rate-limit bucket of an address. An IPv6 client usually holds a whole /64 and can move
 * inside it at will, so IPv6 addresses count by their /64; an IPv4-mapped IPv6 address counts
 * as its IPv4 address. Anything that is not an IP address counts as itself.
 */
export function addressBucket(address: string | undefined): string {
  if (address === undefined || address.trim() === "") return "unknown";
  const bare = address.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped) return mapped[1]!;
  const groups = bare.includes(":") ? ipv6Groups(bare) : undefined;
  return groups ? `${groups.slice(0, 4).join(":")}::/64` : bare.slice(0, 100);
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function ipv6Groups(text: string): string[] | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const last = tail.at(-1) ?? head.at(-1);
  if (last?.includes(".")) {
    // An embedded IPv4 tail (::ffff:1.2.3.4 forms other than the plain mapped one) is two groups.
    const octets = last.split(".").map(Number);
    if (octets.length !== 4 || octets.some((o) => !(o >= 0 && o <= 255))) return undefined;
    const groups = [((octets[0]! << 8) | octets[1]!).toString(16), ((octets[2]! << 8) | octets[3]!).toString(16)];
    (tail.length > 0 ? tail : head).splice(-1, 1, ...groups);
  }
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return groups.map((group) => group.replace(/^0+(?=.)/, ""));
}
