import { createGroupLimiter, type LimitPolicyInput } from '@crawlq/group-limiter';
import { gateKeyPrefix } from '@crawlq/redis';
import type { Redis } from 'ioredis';
import type { Frontier } from '../src/index.js';

/** Groups without a rate and with room for a thousand waiting jobs: a release moves everything at once. */
export const UNPACED: LimitPolicyInput = { defaults: { rate: null, concurrency: 1000 } };

/** The crawl's real group limiter, as the frontier's pacer. */
export function testPacer(redis: Redis, namespace: string, policy: LimitPolicyInput = UNPACED) {
  return createGroupLimiter({ redis, prefix: gateKeyPrefix(namespace), policy });
}

/** Releases until a call moves nothing (no slow start: no worker takes the jobs here); returns how many jobs were released. */
export async function releaseAll(frontier: Frontier): Promise<number> {
  let total = 0;
  for (;;) {
    const { released } = await frontier.release({ room: 10_000, readyTarget: 1_000_000, maxReadyPerGroup: 1_000, slowStart: false });
    if (released === 0) return total;
    total += released;
  }
}
