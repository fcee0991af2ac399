import { defineLuaScript, type LuaArg } from '@crawlq/redis';
import { LIMITER_LUA } from './files.js';

/**
 * Ends a lease (idempotent) and applies the response outcome: 429/503 with Retry-After
 * pause the group; 429 without it pauses exponentially by consecutive strikes; any other
 * status resets the strikes. Responses to requests that started before the last strike
 * belong to the same episode (they were in flight together) and neither add nor reset strikes.
 * Its KEYS, ARGV and reply: `lua/release.lua`.
 */
export const releaseScript = defineLuaScript({
  name: 'release',
  keys: 3,
  file: LIMITER_LUA.file('lua/release.lua'),
});

/** release's ARGV by name, each as `lua/release.lua`'s header describes it. */
export interface ReleaseArgs {
  readonly policyVersion: string;
  readonly leaseId: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly leaseMs: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly maxPauseMs: number;
  /** Given back unused: its start came too late. */
  readonly abandoned: boolean;
  /** The request reached the socket. */
  readonly sent: boolean;
  readonly latencyMs: number | undefined;
  readonly failure: 'timeout' | 'network' | undefined;
  /** The rest only matter for a group that adapts. */
  readonly adaptive: boolean;
  readonly adaptiveFloor: number;
  readonly adaptiveRisePerSecond: number;
  readonly latencyTolerance: number;
  readonly latencySlackMs: number;
  readonly admittedAt: number | undefined;
  readonly startAt: number | undefined;
}

/** release's ARGV, in the order the script reads them. */
export function releaseArgs(a: ReleaseArgs): LuaArg[] {
  return [
    a.policyVersion, // 1
    a.leaseId,
    a.status ?? '',
    a.retryAfterMs ?? '',
    a.leaseMs, // 5
    a.backoffBaseMs,
    a.backoffMaxMs,
    a.maxPauseMs,
    a.abandoned ? '1' : '0',
    a.sent ? '1' : '0', // 10
    a.latencyMs ?? '',
    a.failure ?? '',
    a.adaptive ? '1' : '0',
    a.adaptiveFloor,
    a.adaptiveRisePerSecond, // 15
    a.latencyTolerance,
    a.latencySlackMs,
    a.admittedAt ?? '',
    a.startAt ?? '', // 19
  ];
}
