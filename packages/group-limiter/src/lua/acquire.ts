import { defineLuaScript, type LuaArg } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Admission: pause, then concurrency (leases scored by expiry), then pacing (GCRA).
 * With a fleet-wide cap (ARGV 12 > 0) the start must also fit the crawl-wide
 * pacing in KEYS[5] (evenly spaced starts, no burst), checked in the same script:
 * a start admitted takes a slot from both; a denial by either moves neither
 * pacing, and takes its wake slot on the horizon of the limit that denied it, so
 * a global denial never delays the group's own backlog and vice versa.
 * Its KEYS, ARGV and reply: `lua/acquire.lua`.
 */
export const acquireScript = defineLuaScript({
  name: 'acquire',
  keys: 9,
  file: LIMITER_LUA.file('lua/acquire.lua'),
});

/** acquire's ARGV by name, each as `lua/acquire.lua`'s header describes it. */
export interface AcquireArgs {
  readonly policyVersion: string;
  readonly group: string;
  readonly leaseId: string;
  readonly maxInlineWaitMs: number;
  /** 0: no rate. */
  readonly intervalMs: number;
  readonly toleranceMs: number;
  /** 0: unlimited. */
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly minStepMs: number;
  readonly maxMinIntervalMs: number;
  /** A start at least this far ahead is checked again when it comes (confirm-start). */
  readonly nearMs: number;
  /** 0: no crawl-wide cap. */
  readonly globalIntervalMs: number;
  readonly adaptive: boolean;
  readonly adaptiveFloor: number;
  readonly adaptiveRisePerSecond: number;
  /** The start slot the release step gave the job. */
  readonly slot: number | undefined;
  /** The job's progress, written to its hash. */
  readonly progress: string | number | undefined;
  /** The server level's: server ('' = none), its interval ms, its concurrency cap. */
  readonly server: readonly [string, number, number];
  readonly graceMs: number;
  /** What the caller's own releases of the group left to write (see `lua/fold-releases.lua`); undefined: none. */
  readonly released?: FoldedReleases | undefined;
}

/**
 * Releases of one group that only removed their leases, folded: their hold-time
 * samples as `old * holdDecay + holdAddend` (`lastHoldMs` alone for a group
 * without a hold time yet), and how many of their requests went out.
 */
export interface FoldedReleases {
  readonly holdDecay: number;
  readonly holdAddend: number;
  /** Undefined: none of them measured a hold time (their leases had gone, or lasted beyond the lease time). */
  readonly lastHoldMs?: number;
  readonly sent: number;
}

/** The four values a script takes for folded releases, as `lua/fold-releases.lua` reads them. */
export function foldedReleasesArgs(released: FoldedReleases | undefined): LuaArg[] {
  if (released === undefined) return ['', '', '', ''];
  return [released.holdDecay.toPrecision(12), released.holdAddend.toFixed(3), released.lastHoldMs === undefined ? '' : released.lastHoldMs.toFixed(3), released.sent];
}

/** acquire's ARGV, in the order the script reads them. */
export function acquireArgs(a: AcquireArgs): LuaArg[] {
  return [
    a.policyVersion, // 1
    a.group,
    a.leaseId,
    a.maxInlineWaitMs,
    a.intervalMs, // 5
    a.toleranceMs,
    a.concurrency,
    a.leaseMs,
    a.minStepMs,
    a.maxMinIntervalMs, // 10
    a.nearMs,
    a.globalIntervalMs,
    a.adaptive ? '1' : '0',
    a.adaptiveFloor,
    a.adaptiveRisePerSecond, // 15
    a.slot ?? '',
    a.progress ?? '',
    ...a.server, // 18-20
    a.graceMs, // 21
    ...foldedReleasesArgs(a.released), // 22-25
  ];
}
