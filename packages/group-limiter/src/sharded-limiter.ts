import { createGroupLimiter, type GroupLimiter } from './group-limiter.js';
import type { GroupStatus } from './group-status.js';
import { mergeServerStatuses } from './server-status.js';
import type { RedisClient } from '@crawlq/redis';

/**
 * One limiter per shard of a crawl, shard i on `prefixes[i]`, each told its
 * place so that together they split the crawl-wide rate into whole shares
 * (a limiter left without it would pace the whole cap in its shard).
 */
export function createShardLimiters(redis: RedisClient, prefixes: readonly string[]): GroupLimiter[] {
  return prefixes.map((prefix, index) => createGroupLimiter({ redis, prefix, shard: { index, count: prefixes.length } }));
}

/**
 * One limiter over a crawl's shards (see `shardNamespaces` in @crawlq/redis):
 * each group's state lives in its shard's keys, so every call about one group
 * goes to that shard's limiter, and its scripts stay in one slot. The policy
 * is written to every shard, since each shard's scripts check it there. The
 * shards' limiters come from {@link createShardLimiters}, so that they split
 * the crawl-wide rate into whole shares.
 * `runPaced` is per shard by nature: callers run it on the shard's own
 * limiter, and groups of two shards are refused.
 */
export function createShardedGroupLimiter(shards: readonly GroupLimiter[], shardOf: (group: string) => number): GroupLimiter {
  const [first] = shards;
  if (first === undefined) throw new RangeError('a sharded limiter needs at least one shard');
  const of = (group: string): GroupLimiter => shards[shardOf(group)] ?? first;
  return {
    confirmStart: (lease) => of(lease.group).confirmStart(lease),
    async setPolicy(policy) {
      // Shard 0 first: its answer (changed, previous) is the fleet's, and the rest follow it.
      const result = await first.setPolicy(policy);
      await Promise.all(shards.slice(1).map((limiter) => limiter.setPolicy(policy)));
      return result;
    },
    async getPolicy() {
      // Each shard's limiter caches the policy it read; all are refreshed.
      const [policy] = await Promise.all(shards.map((limiter) => limiter.getPolicy()));
      return policy ?? null;
    },
    limitsFor: (group) => of(group).limitsFor(group),
    acquire: (request) => of(request.group).acquire(request),
    localTimeOf: (group, redisMs) => of(group).localTimeOf(group, redisMs),
    release: (lease, outcome) => of(lease.group).release(lease, outcome),
    async flush() {
      await Promise.all(shards.map((limiter) => limiter.flush()));
    },
    abandon: (lease) => of(lease.group).abandon(lease),
    retakeLateStart: (lease) => of(lease.group).retakeLateStart(lease),
    reportSlip: (group, lateMs, server) => of(group).reportSlip(group, lateMs, server),
    runPaced(script, groups, call) {
      const shard = new Set(groups.map(shardOf));
      if (shard.size > 1) throw new RangeError(`runPaced over groups of ${shard.size} shards: run it on each shard's limiter`);
      return of(groups[0] ?? '').runPaced(script, groups, call);
    },
    pause: (group, forMs, reason) => of(group).pause(group, forMs, reason),
    resume: (group) => of(group).resume(group),
    setMinInterval: (group, ms) => of(group).setMinInterval(group, ms),
    status: (group) => of(group).status(group),
    async list() {
      const lists = await Promise.all(shards.map((limiter) => limiter.list()));
      return lists.flat().sort((a: GroupStatus, b: GroupStatus) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
    },
    async servers() {
      return mergeServerStatuses(await Promise.all(shards.map((limiter) => limiter.servers())));
    },
    // Each shard paces its share of the crawl-wide cap (see GroupLimiterOptions.shard): the crawl's
    // pace is theirs together (their rates add up).
    async globalStatus() {
      const statuses = await Promise.all(shards.map((limiter) => limiter.globalStatus()));
      const [status] = statuses;
      if (status === undefined) throw new RangeError('a sharded limiter needs at least one shard');
      const startsPerMs = statuses.reduce((sum, { paceMs }) => (paceMs > 0 ? sum + 1 / paceMs : sum), 0);
      return {
        rate: status.rate,
        paceMs: startsPerMs > 0 ? 1 / startsPerMs : 0,
        admitted: statuses.reduce((sum, { admitted }) => sum + admitted, 0),
        deferred: statuses.reduce((sum, { deferred }) => sum + deferred, 0),
      };
    },
  };
}
