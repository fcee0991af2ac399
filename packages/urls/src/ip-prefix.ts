import { parseIpv4, parseIpv6 } from './classify-ip.js';
import { InvalidIpError } from './errors.js';

/** An address as a number of its family's width (32 or 128 bits). IPv4-mapped IPv6 counts as IPv4. */
export interface IpBits {
  readonly family: 4 | 6;
  readonly value: bigint;
}

/** An address range, `network/prefix`. */
export interface Cidr {
  readonly family: 4 | 6;
  readonly network: bigint;
  readonly prefix: number;
  /** The range as given, normalized (`203.0.113.0/24`, `2001:db8::/32`). */
  readonly text: string;
}

/**
 * Parses an IPv4 or IPv6 address (brackets and a zone id allowed); an
 * IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is its IPv4 address, as the
 * socket reaches the same machine.
 * @throws {InvalidIpError} when `address` is not an IP address.
 */
export function ipBits(address: string): IpBits {
  const v4 = parseIpv4(address);
  if (v4 !== undefined) return { family: 4, value: BigInt(v4) };
  const v6 = parseIpv6(address);
  if (v6 === undefined) throw new InvalidIpError(address);
  const value = v6.reduce((sum, group) => (sum << 16n) | BigInt(group), 0n);
  if (value >> 32n === 0xffffn) return { family: 4, value: value & 0xffffffffn };
  return { family: 6, value };
}

function width(family: 4 | 6): number {
  return family === 4 ? 32 : 128;
}

function masked(value: bigint, family: 4 | 6, prefix: number): bigint {
  const bits = BigInt(width(family) - prefix);
  return (value >> bits) << bits;
}

/** Text of an address number: dotted decimal, or IPv6 with the longest run of zero groups as `::`. */
export function formatIp(bits: IpBits): string {
  if (bits.family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((bits.value >> shift) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((bits.value >> BigInt((7 - i) * 16)) & 0xffffn));
  let best = { at: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > best.length && j - i > 1) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.length).join(':')}`;
}

/**
 * Parses `address/prefix` (a bare address is a single-address range).
 * @throws {InvalidIpError} for an address or prefix that is not one.
 */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const bits = ipBits(address);
  const max = width(bits.family);
  const prefixText = slash === -1 ? String(max) : text.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  // An IPv4-mapped range keeps its IPv4 meaning: ::ffff:10.0.0.0/104 is 10.0.0.0/8.
  const mapped = bits.family === 4 && parseIpv4(address) === undefined;
  const own = mapped ? prefix - 96 : prefix;
  if (!Number.isInteger(own) || own < 0 || own > max) throw new InvalidIpError(text);
  const network = masked(bits.value, bits.family, own);
  return { family: bits.family, network, prefix: own, text: `${formatIp({ family: bits.family, value: network })}/${own}` };
}

/** Whether `range` holds the address. */
export function cidrContains(range: Cidr, address: IpBits): boolean {
  return range.family === address.family && masked(address.value, address.family, range.prefix) === range.network;
}

/**
 * The server an address belongs to for politeness: the address itself for
 * IPv4 with prefix 32 (`203.0.113.7`), else its network (`2001:db8:1:2::/64`).
 * One machine commonly holds a whole IPv6 /64, so counting per IPv6 address
 * would let it be split into many servers.
 * @throws {InvalidIpError} when `address` is not an IP address.
 */
export function serverOfAddress(address: string, prefixes: { readonly v4: number; readonly v6: number }): string {
  const bits = ipBits(address);
  const prefix = bits.family === 4 ? prefixes.v4 : prefixes.v6;
  const network = formatIp({ family: bits.family, value: masked(bits.value, bits.family, prefix) });
  return prefix === width(bits.family) ? network : `${network}/${prefix}`;
}
