import type { LimitPolicy } from './policy.js';
import { paceIntervalMs } from './resolve-limits.js';
import { DEFAULT_SERVER_POLICY, ServerLimitsBook, type ServerTarget } from './server-policy.js';

/** The server level's part of one acquire call: KEYS 7-9 and ARGV 18-20 (see `lua/server-gate.lua`). */
export interface ServerLevelCall {
  readonly keys: readonly [string, string, string];
  readonly args: readonly [string, number, number];
  /** The server, when its level applies to this request (else nothing is read or written for it). */
  readonly server?: string;
  /** The server's concurrency cap applies: the lease is also in its lease set, and release takes it out. */
  readonly capped: boolean;
  /** How late a start may go at this server (see `ServerLevel.lateMs`); 0 without a rate. */
  readonly lateMs: number;
}

/** Key names of the server level, under a limiter's prefix (same hash tag, so one slot with the group's keys). */
export interface ServerKeys {
  readonly servers: string;
  server(server: string): string;
  leases(server: string): string;
}

export function serverKeys(prefix: string): ServerKeys {
  return {
    servers: `${prefix}:servers`,
    server: (server) => `${prefix}:server:${server}`,
    leases: (server) => `${prefix}:serverleases:${server}`,
  };
}

/**
 * The server level under one policy, for one shard: each of S shards paces
 * 1/S of a server's rate (its spacing times S) and holds a whole share of
 * its concurrency cap (at least one), as a shard's scripts see only its keys.
 */
export class ServerLevel {
  readonly #book: ServerLimitsBook;
  readonly #policy: LimitPolicy;
  readonly #keys: ServerKeys;
  readonly #shard: { readonly index: number; readonly count: number };

  constructor(policy: LimitPolicy, keys: ServerKeys, shard: { readonly index: number; readonly count: number }) {
    this.#policy = policy;
    this.#book = new ServerLimitsBook(policy.servers ?? DEFAULT_SERVER_POLICY);
    this.#keys = keys;
    this.#shard = shard;
  }

  /** Whether any server has a limit under this policy. */
  get active(): boolean {
    return this.#book.active;
  }

  /** The server `address` belongs to and its limits (throws InvalidIpError for a non-address). */
  target(address: string): ServerTarget {
    return this.#book.serverFor(address);
  }

  /** The spacing this shard keeps between a server's starts; 0 = no rate. */
  intervalMs(target: ServerTarget): number {
    return target.limits.rate === null ? 0 : paceIntervalMs(target.limits.rate, this.#policy) * this.#shard.count;
  }

  /**
   * How late a start may go past its slot at the server and the server still
   * see at most its rate's max in any window: half the margin its spacing
   * keeps over one window (max starts spaced by the pacing interval span the
   * window plus max times that interval's margin), at least `floorMs`. The
   * server level counts windows, not pairs: unlike a group's, this margin is
   * not halved per start. 0 without a rate.
   */
  lateMs(target: ServerTarget, floorMs: number): number {
    const rate = target.limits.rate;
    if (rate === null) return 0;
    return Math.max(floorMs, (rate.max * (paceIntervalMs(rate, this.#policy) - rate.durationMs / rate.max)) / 2);
  }

  /** This shard's part of a server's concurrency cap; 0 = none. */
  concurrency(target: ServerTarget): number {
    const cap = target.limits.concurrency;
    if (cap === null) return 0;
    const { index, count } = this.#shard;
    return Math.max(1, Math.floor(cap / count) + (index < cap % count ? 1 : 0));
  }

  /** KEYS 7-9 and ARGV 18-20 for an acquire (`fallbackKey`: a key of the group's, when there is no server). */
  call(address: string | undefined, fallbackKey: string, lateFloorMs = 0): ServerLevelCall {
    const none: ServerLevelCall = { keys: [fallbackKey, fallbackKey, fallbackKey], args: ['', 0, 0], capped: false, lateMs: 0 };
    if (address === undefined || !this.#book.active) return none;
    const target = this.target(address);
    const interval = this.intervalMs(target);
    const concurrency = this.concurrency(target);
    if (interval === 0 && concurrency === 0) return none;
    const { server } = target;
    return {
      keys: [this.#keys.server(server), this.#keys.leases(server), this.#keys.servers],
      args: [server, interval, concurrency],
      server,
      capped: concurrency > 0,
      lateMs: this.lateMs(target, lateFloorMs),
    };
  }
}
