import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { classifyIp, isPublicIp } from '@crawlq/urls';
import type { AddressPolicy, HostResolver } from './fetcher-options.js';
import { PolicyViolation } from './errors.js';

/** Default SSRF policy: public internet addresses only. */
export const publicAddressesOnly: AddressPolicy = (address) => isPublicIp(address);

/** `[::1]` -> `::1`; URL hostnames keep IPv6 literals in brackets. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** Every SSRF refusal says how to lift it: the crawler's own flag (docs/07-operations.md, "Security defaults"). */
const ALLOW_HINT = ' (--allow-private-network allows loopback, private and link-local targets)';

function describe(address: string): string {
  try {
    return `${address} (${classifyIp(address)})`;
  } catch {
    return address;
  }
}

/**
 * Refuses an IP-literal host the policy does not allow. Node never calls the
 * lookup function for IP literals, so they need this separate check.
 * @throws PolicyViolation with reason `'ssrf'`.
 */
export function checkLiteralHost(hostname: string, policy: AddressPolicy): void {
  const host = bareHost(hostname);
  if (isIP(host) !== 0 && !policy(host, host)) {
    throw new PolicyViolation('ssrf', `address ${describe(host)} is not allowed${ALLOW_HINT}`);
  }
}

async function defaultResolve(hostname: string): Promise<readonly string[]> {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

function wantedFamily(options: LookupOptions): 0 | 4 | 6 {
  // Node passes 0/4/6; older callers may pass 'IPv4'/'IPv6'.
  const family: unknown = options.family;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

function notFound(hostname: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  error.code = 'ENOTFOUND';
  error.syscall = 'getaddrinfo';
  return error;
}

/** Options of {@link createGuardedLookup}. */
export interface GuardedLookupOptions {
  /** Which resolved addresses may be connected to; undefined allows all. */
  readonly policy: AddressPolicy | undefined;
  /** Resolver replacing node:dns; undefined uses `dns.lookup` (getaddrinfo). */
  readonly resolve: HostResolver | undefined;
}

/**
 * A `lookup` for http(s).Agent connections that resolves the hostname and hands
 * Node only the addresses the policy allows, so the check covers the address
 * actually connected to (no time-of-check/time-of-use gap, no DNS rebinding).
 *
 * It runs once per NEW connection. Pooled keep-alive sockets are keyed by
 * host:port (plus TLS options), so a socket is only ever reused for the same
 * hostname whose address was checked when the socket was opened, and a redirect
 * to another host (or to an IP literal, checked by {@link checkLiteralHost})
 * gets its own pool entry and its own check. A later DNS answer pointing that
 * hostname to a private address only matters for a new socket, which is
 * checked again.
 */
export function createGuardedLookup(options: GuardedLookupOptions): LookupFunction {
  const resolve = options.resolve ?? defaultResolve;
  const { policy } = options;
  return (hostname, lookupOptions, callback) => {
    const family = wantedFamily(lookupOptions);
    const deliver = (addresses: readonly string[]): void => {
      let candidates: LookupAddress[] = [];
      for (const address of addresses) {
        const addressFamily = isIP(address);
        if (addressFamily === 0) continue;
        if (family === 0 || family === addressFamily) candidates.push({ address, family: addressFamily });
      }
      if (policy !== undefined) {
        const allowed = candidates.filter((candidate) => policy(candidate.address, hostname));
        const [refused] = candidates;
        if (allowed.length === 0 && refused !== undefined) {
          callback(new PolicyViolation('ssrf', `${hostname} resolves to ${describe(refused.address)}, which is not allowed${ALLOW_HINT}`), '');
          return;
        }
        // Dropping the disallowed addresses (rather than failing) is safe: Node
        // connects only to what we return.
        candidates = allowed;
      }
      const [first] = candidates;
      if (first === undefined) {
        callback(notFound(hostname), '');
      } else if (lookupOptions.all === true) {
        callback(null, candidates);
      } else {
        callback(null, first.address, first.family);
      }
    };
    void resolve(hostname).then(deliver, (error: unknown) => {
      callback(error instanceof Error ? error : notFound(hostname), '');
    });
  };
}
