/**
 * Which IP addresses a webhook may not be delivered to unless the deployment allows private
 * ones: everything that is not a public unicast address. IPv6 forms that carry an IPv4 address
 * (mapped, compatible, NAT64, 6to4) are judged by that address, so `::ffff:127.0.0.1` is
 * loopback like `127.0.0.1`.
 */

/** Why `address` (an IPv4 or IPv6 literal, brackets and zone allowed) is refused; undefined when it is public. */
export function blockedAddressReason(address: string): string | undefined {
  const text = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return ipv4Reason(v4);
  const v6 = parseIPv6(text);
  if (v6 === undefined) return "not an IP address";
  return ipv6Reason(v6);
}

/** True when `text` is an IPv4 or IPv6 literal (brackets allowed). */
export function isIpLiteral(text: string): boolean {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return parseIPv4(bare) !== undefined || parseIPv6(bare) !== undefined;
}

const METADATA_V4 = [ipv4(169, 254, 169, 254), ipv4(100, 100, 100, 200)];

/** [first address, prefix length, reason], checked in order. */
const V4_RANGES: [number, number, string][] = [
  [ipv4(0, 0, 0, 0), 8, "an unspecified address"],
  [ipv4(10, 0, 0, 0), 8, "a private address"],
  [ipv4(100, 64, 0, 0), 10, "a carrier-grade NAT address"],
  [ipv4(127, 0, 0, 0), 8, "a loopback address"],
  [ipv4(169, 254, 0, 0), 16, "a link-local address"],
  [ipv4(172, 16, 0, 0), 12, "a private address"],
  [ipv4(192, 0, 0, 0), 24, "a reserved address"],
  [ipv4(192, 0, 2, 0), 24, "a documentation address"],
  [ipv4(192, 88, 99, 0), 24, "a reserved address"],
  [ipv4(192, 168, 0, 0), 16, "a private address"],
  [ipv4(198, 18, 0, 0), 15, "a reserved address"],
  [ipv4(198, 51, 100, 0), 24, "a documentation address"],
  [ipv4(203, 0, 113, 0), 24, "a documentation address"],
  [ipv4(224, 0, 0, 0), 4, "a multicast address"],
  [ipv4(240, 0, 0, 0), 4, "a reserved address"],
];

function ipv4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function ipv4Reason(address: number): string | undefined {
  if (METADATA_V4.includes(address)) return "a cloud metadata address";
  for (const [first, bits, reason] of V4_RANGES) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === first) return reason;
  }
  return undefined;
}

/** Eight 16-bit groups. */
type IPv6 = number[];

function ipv6Reason(groups: IPv6): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const embedded = ((g6 << 16) | g7) >>> 0;
  const zeroUpTo = (n: number) => groups.slice(0, n).every((g) => g === 0);
  if (zeroUpTo(7) && g7 === 1) return "a loopback address";
  if (zeroUpTo(8)) return "an unspecified address";
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated)
  if (zeroUpTo(5) && (g5 === 0xffff || g5 === 0)) return ipv4Reason(embedded) ?? (g5 === 0 ? "a reserved address" : undefined);
  if (zeroUpTo(4) && g4 === 0xffff && g5 === 0) return ipv4Reason(embedded);
  // NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48) reaches the IPv4 address it embeds.
  if (g0 === 0x64 && g1 === 0xff9b && ((g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) || g2 === 1)) return ipv4Reason(embedded);
  // 6to4 (2002::/16) carries the relay's IPv4 address in groups 1 and 2.
  if (g0 === 0x2002) return ipv4Reason(((g1 << 16) | g2) >>> 0);
  if ((g0 & 0xff00) === 0xff00) return "a multicast address";
  if ((g0 & 0xffc0) === 0xfe80) return "a link-local address";
  if ((g0 & 0xffc0) === 0xfec0) return "a private address";
  if (g0 === 0xfd00 && g1 === 0x0ec2 && groups.slice(2, 7).every((g) => g === 0) && g7 === 0x254) return "a cloud metadata address";
  if ((g0 & 0xfe00) === 0xfc00) return "a private address";
  if (g0 === 0x2001 && g1 === 0x0db8) return "a documentation address";
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return "a reserved address";
  return undefined;
}

function parseIPv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

function parseIPv6(text: string): IPv6 | undefined {
  const bare = text.split("%")[0]!.toLowerCase();
  if (!/^[0-9a-f:.]+$/.test(bare)) return undefined;
  const halves = bare.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === "") return [];
    const groups: number[] = [];
    const parts = half.split(":");
    for (const [i, part] of parts.entries()) {
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = parseIPv4(part);
        if (v4 === undefined) return undefined;
        groups.push(v4 >>> 16, v4 & 0xffff);
      } else if (/^[0-9a-f]{1,4}$/.test(part)) {
        groups.push(parseInt(part, 16));
      } else {
        return undefined;
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}
