import { InvalidIpError } from './errors.js';

const IPV4_PART = /^(?:0|[1-9]\d{0,2})$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/**
 * What kind of network an address belongs to, for the fetcher's SSRF guard:
 * - `loopback`: 127.0.0.0/8, ::1;
 * - `private`: 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT),
 *   fc00::/7 (unique local), fec0::/10 (old site-local), 64:ff9b:1::/48;
 * - `link-local`: 169.254/16, fe80::/10;
 * - `metadata`: cloud instance-metadata endpoints, 169.254.169.254,
 *   169.254.170.2 (AWS ECS), 100.100.100.200 (Alibaba), fd00:ec2::254;
 * - `unspecified`: 0.0.0.0/8 ("this network"; Linux connects 0.0.0.0 to
 *   the local host), ::;
 * - `multicast`: 224/4, ff00::/8;
 * - `reserved`: 240/4 (with 255.255.255.255), the documentation and
 *   benchmark ranges (192.0.2/24, 198.51.100/24, 203.0.113/24, 198.18/15,
 *   2001:db8::/32), 192.0.0/24, 192.88.99/24, 100::/64, 2001::/23, the
 *   deprecated IPv4-compatible ::/96, and IPv6 outside 2000::/3;
 * - `public`: everything else.
 *
 * IPv6 forms that carry an IPv4 address are classified by that address:
 * IPv4-mapped `::ffff:a.b.c.d` (and `::ffff:7f00:1`), `::ffff:0:a.b.c.d`,
 * NAT64 `64:ff9b::/96` and 6to4 `2002::/16`, so `::ffff:127.0.0.1` is
 * loopback. Brackets and a zone id (`fe80::1%eth0`) are accepted.
 */
export type IpClass = 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved' | 'public';

/**
 * Classifies an IPv4 or IPv6 address; see {@link IpClass} for the ranges.
 *
 * @throws {InvalidIpError} when `address` is not an IP address.
 */
export function classifyIp(address: string): IpClass {
  const v4 = parseIpv4(address);
  if (v4 !== undefined) return classifyIpv4(v4);
  const v6 = parseIpv6(address);
  if (v6 !== undefined) return classifyIpv6(v6);
  throw new InvalidIpError(address);
}

/**
 * True only for `public` addresses. Anything else, including text that is
 * not an address at all, is false: the guard fails closed.
 */
export function isPublicIp(address: string): boolean {
  const v4 = parseIpv4(address);
  if (v4 !== undefined) return classifyIpv4(v4) === 'public';
  const v6 = parseIpv6(address);
  return v6 !== undefined && classifyIpv6(v6) === 'public';
}

/** [network, mask, class]; the first match wins, so narrow ranges come first. */
type Range4 = readonly [network: number, mask: number, kind: IpClass];

const IPV4_RANGES: readonly Range4[] = [
  cidr('169.254.169.254/32', 'metadata'),
  cidr('169.254.170.2/32', 'metadata'),
  cidr('100.100.100.200/32', 'metadata'),
  cidr('0.0.0.0/8', 'unspecified'),
  cidr('127.0.0.0/8', 'loopback'),
  cidr('10.0.0.0/8', 'private'),
  cidr('172.16.0.0/12', 'private'),
  cidr('192.168.0.0/16', 'private'),
  cidr('100.64.0.0/10', 'private'),
  cidr('169.254.0.0/16', 'link-local'),
  cidr('224.0.0.0/4', 'multicast'),
  cidr('240.0.0.0/4', 'reserved'),
  cidr('192.0.0.0/24', 'reserved'),
  cidr('192.0.2.0/24', 'reserved'),
  cidr('192.88.99.0/24', 'reserved'),
  cidr('198.18.0.0/15', 'reserved'),
  cidr('198.51.100.0/24', 'reserved'),
  cidr('203.0.113.0/24', 'reserved'),
];

function cidr(text: string, kind: IpClass): Range4 {
  const [address = '', prefix = ''] = text.split('/');
  const network = parseIpv4(address);
  if (network === undefined) throw new InvalidIpError(address);
  const bits = Number(prefix);
  return [network, bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0, kind];
}

function classifyIpv4(value: number): IpClass {
  for (const [network, mask, kind] of IPV4_RANGES) {
    if ((value & mask) >>> 0 === network) return kind;
  }
  return 'public';
}

/** Eight 16-bit groups. */
type Ipv6 = readonly number[];

function classifyIpv6(g: Ipv6): IpClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = ((g6 << 16) | g7) >>> 0;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (upperZero && g4 === 0) {
    if (g5 === 0xffff) return classifyIpv4(embedded); // ::ffff:a.b.c.d, IPv4-mapped
    if (g5 === 0 && g6 === 0) {
      if (g7 === 0) return 'unspecified';
      if (g7 === 1) return 'loopback';
    }
    if (g5 === 0) return 'reserved'; // ::a.b.c.d, deprecated IPv4-compatible
  }
  if (upperZero && g4 === 0xffff && g5 === 0) return classifyIpv4(embedded); // ::ffff:0:a.b.c.d, IPv4-translated
  if (g0 === 0x64 && g1 === 0xff9b) {
    if (g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIpv4(embedded); // NAT64
    if (g2 === 1) return 'private'; // 64:ff9b:1::/48, local-use NAT64
  }
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 0x254) {
    return 'metadata'; // AWS IMDS over IPv6
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // fec0::/10, deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2002) return classifyIpv4(((g1 << 16) | g2) >>> 0); // 6to4 wraps an IPv4 address
  if (g0 === 0x2001 && g1 === 0x0db8) return 'reserved'; // documentation
  if (g0 === 0x2001 && g1 < 0x0200) return 'reserved'; // 2001::/23, IETF protocol assignments (Teredo...)
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // 100::/64, discard-only
  if ((g0 & 0xe000) !== 0x2000) return 'reserved'; // only 2000::/3 is global unicast
  return 'public';
}

/** Strict dotted decimal (no leading zeros: `010` means 8 to some parsers). */
export function parseIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!IPV4_PART.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

export function parseIpv6(input: string): Ipv6 | undefined {
  let text = input;
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (!text.includes(':')) return undefined;

  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = parseGroups(halves[0] ?? '', halves.length === 1);
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? '', true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail];
}

/** Parses colon-separated groups; the last may be dotted IPv4 when `allowV4`. */
function parseGroups(text: string, allowV4: boolean): number[] | undefined {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (allowV4 && index === parts.length - 1 && part.includes('.')) {
      const v4 = parseIpv4(part);
      if (v4 === undefined) return undefined;
      groups.push(v4 >>> 16, v4 & 0xffff);
    } else if (HEX_GROUP.test(part)) {
      groups.push(Number.parseInt(part, 16));
    } else {
      return undefined;
    }
  }
  return groups;
}
