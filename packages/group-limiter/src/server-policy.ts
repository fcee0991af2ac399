import { cidrContains, ipBits, parseCidr, serverOfAddress, type Cidr } from '@crawlq/urls';

/** At most `max` starts per `durationMs` (the same shape as the policy's `RateLimit`; declared here so the two files do not import each other). */
interface RateLimit {
  readonly max: number;
  readonly durationMs: number;
}

/** The limits of one server (the machine an address belongs to), over every group it serves. */
export interface ServerLimits {
  /** Starts per window, evenly spaced; `null` = no rate. */
  readonly rate: RateLimit | null;
  /** Requests in flight at once; `null` = no cap. */
  readonly concurrency: number | null;
}

/**
 * Limits for the servers in a range: a CDN or platform whose edge address
 * serves thousands of unrelated sites is not one machine (`unlimited`: its
 * requests meet only their group's gate).
 */
export interface ServerRule extends Partial<ServerLimits> {
  /** `address/prefix` (`104.16.0.0/13`, `2606:4700::/32`) or one address. */
  readonly cidr: string;
  /** No server gate for these addresses. */
  readonly unlimited?: boolean;
  /** Who the range belongs to, for `server list` (`cloudflare`). */
  readonly name?: string;
}

/** The server level of the gate: defaults, range rules (first match wins), and how wide one server is. */
export interface ServerPolicy {
  readonly defaults: ServerLimits;
  readonly rules: readonly ServerRule[];
  /**
   * Leading bits of an address that name its server.
   * @default 32 (IPv4), 64 (IPv6)
   */
  readonly prefixV4: number;
  readonly prefixV6: number;
}

/** A `ServerPolicy` with every field optional. */
export interface ServerPolicyInput {
  readonly defaults?: Partial<ServerLimits>;
  readonly rules?: readonly ServerRule[];
  readonly prefixV4?: number;
  readonly prefixV6?: number;
}

/** No server gate: the library's default, so a limiter not told otherwise costs nothing more. */
export const DEFAULT_SERVER_POLICY: ServerPolicy = Object.freeze({
  defaults: Object.freeze({ rate: null, concurrency: null }),
  rules: Object.freeze([]),
  prefixV4: 32,
  prefixV6: 64,
});

/** The server a request goes to, with its limits under the policy (see {@link serverFor}). */
export interface ServerTarget {
  /** `203.0.113.7` or `2001:db8:1:2::/64`. */
  readonly server: string;
  readonly limits: ServerLimits;
  /** The rule that matched (its `name`, else its range), if any. */
  readonly rule?: string;
}

/**
 * Validates a server policy and fills in defaults; problems go to `issues`.
 */
export function normalizeServerPolicy(input: ServerPolicyInput, issues: string[]): ServerPolicy {
  const prefix = (value: unknown, path: string, bits: { max: number; fallback: number }): number => {
    if (value === undefined) return bits.fallback;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 8 && value <= bits.max) return value;
    issues.push(`${path} must be an integer in [8, ${bits.max}], got ${JSON.stringify(value)}`);
    return bits.fallback;
  };
  const limits = (value: Partial<ServerLimits>, path: string): Partial<ServerLimits> => {
    const out: { rate?: RateLimit | null; concurrency?: number | null } = {};
    if (value.rate !== undefined) out.rate = checkRate(value.rate, `${path}.rate`, issues);
    if (value.concurrency !== undefined) out.concurrency = checkCount(value.concurrency, `${path}.concurrency`, issues);
    return out;
  };
  const defaults = limits(input.defaults ?? {}, 'servers.defaults');
  return {
    defaults: { rate: defaults.rate ?? null, concurrency: defaults.concurrency ?? null },
    rules: (input.rules ?? []).map((rule, index) => {
      const path = `servers.rules[${index}]`;
      let cidr = '';
      try {
        cidr = parseCidr(String(rule.cidr)).text;
      } catch {
        issues.push(`${path}.cidr must be address/prefix such as 104.16.0.0/13 or 2606:4700::/32, got ${JSON.stringify(rule.cidr)}`);
      }
      const out: { cidr: string; name?: string; unlimited?: boolean } & Partial<ServerLimits> = { cidr, ...limits(rule, path) };
      if (rule.name !== undefined) out.name = String(rule.name);
      if (rule.unlimited !== undefined) {
        if (typeof rule.unlimited !== 'boolean') issues.push(`${path}.unlimited must be true or false`);
        else if (rule.unlimited) out.unlimited = true;
      }
      return out;
    }),
    prefixV4: prefix(input.prefixV4, 'servers.prefixV4', { max: 32, fallback: 32 }),
    prefixV6: prefix(input.prefixV6, 'servers.prefixV6', { max: 128, fallback: 64 }),
  };
}

function checkRate(rate: RateLimit | null, path: string, issues: string[]): RateLimit | null {
  if (rate === null) return null;
  const ok = typeof rate === 'object' && Number.isInteger(rate.max) && rate.max >= 1 && Number.isFinite(rate.durationMs) && rate.durationMs >= 1;
  if (!ok) issues.push(`${path} must be { max, durationMs } (max an integer >= 1) or null`);
  return ok ? { max: rate.max, durationMs: rate.durationMs } : null;
}

function checkCount(value: number | null, path: string, issues: string[]): number | null {
  if (value === null) return null;
  if (Number.isInteger(value) && value >= 1) return value;
  issues.push(`${path} must be an integer >= 1 or null, got ${JSON.stringify(value)}`);
  return null;
}

/** A server policy with its ranges parsed once, for the gate's lookups. */
export class ServerLimitsBook {
  readonly #policy: ServerPolicy;
  readonly #rules: readonly { readonly range: Cidr; readonly rule: ServerRule }[];

  constructor(policy: ServerPolicy) {
    this.#policy = policy;
    this.#rules = policy.rules.map((rule) => ({ range: parseCidr(rule.cidr), rule }));
  }

  /** Whether any address can meet a server limit (no: the gate skips the server level, at no cost). */
  get active(): boolean {
    const { rate, concurrency } = this.#policy.defaults;
    return rate !== null || concurrency !== null || this.#rules.some(({ rule }) => !rule.unlimited && (rule.rate != null || rule.concurrency != null));
  }

  /**
   * The server `address` belongs to and its limits (first matching rule,
   * its unset fields from the defaults; `unlimited`: none).
   * @throws {InvalidIpError} when `address` is not an IP address.
   */
  serverFor(address: string): ServerTarget {
    const bits = ipBits(address);
    const server = serverOfAddress(address, { v4: this.#policy.prefixV4, v6: this.#policy.prefixV6 });
    const match = this.#rules.find(({ range }) => cidrContains(range, bits));
    if (match === undefined) return { server, limits: this.#policy.defaults };
    const { rule } = match;
    const name = rule.name ?? rule.cidr;
    if (rule.unlimited) return { server, limits: { rate: null, concurrency: null }, rule: name };
    return {
      server,
      limits: {
        rate: rule.rate !== undefined ? rule.rate : this.#policy.defaults.rate,
        concurrency: rule.concurrency !== undefined ? rule.concurrency : this.#policy.defaults.concurrency,
      },
      rule: name,
    };
  }
}
