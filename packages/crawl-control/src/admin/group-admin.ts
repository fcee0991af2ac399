import { readShardNamespaces } from '@crawlq/frontier';
import type { GlobalStatus, GroupStatus } from '@crawlq/group-limiter';
import { openCrawlQueue } from '@crawlq/queue';
import { connectRedis } from '@crawlq/redis';
import { openShardedParts, type FleetAdminServices } from '../crawl-services.js';
import { describeGroupWait, GroupWaits, groupWaitsKey, readGroupWaits, type GroupWait } from '../status/group-waits.js';

const PAGE = 1_000;

/** `FleetAdminServices` a long-running process owns. */
export interface FleetAdmin extends FleetAdminServices {
  /**
   * Re-reads the crawl's shard layout, and follows it if it changed: a
   * dashboard started before a crawl of several shards began sees one shard
   * until then. Cheap (one GET) when nothing changed.
   */
  followLayout(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens the fleet's state of a namespace for a long-running reader (the
 * dashboard): commands fail fast while Redis is down, and the connections
 * come back after a Redis restart.
 */
export async function openFleetAdmin(redisUrl: string, namespace: string): Promise<FleetAdmin> {
  const redis = await connectRedis(redisUrl, { role: 'server', name: 'fleet-admin' });
  const openParts = (shards: readonly string[]) =>
    openShardedParts(redis, shards, (shard) => {
      const queue = openCrawlQueue({ url: redisUrl, maxRetriesPerRequest: 1 }, shard);
      queue.on('error', () => undefined);
      return queue;
    });
  // The shards as recorded when the crawl began (one before that, or for a crawl of one).
  let shards = await readShardNamespaces(redis, namespace);
  let parts = openParts(shards);
  return {
    config: { namespace },
    redis,
    get queues() {
      return parts.queues;
    },
    get limiter() {
      return parts.limiter;
    },
    async followLayout() {
      const now = await readShardNamespaces(redis, namespace);
      if (now.join() === shards.join()) return;
      const previous = parts;
      shards = now;
      parts = openParts(now);
      await previous.close().catch(() => undefined);
    },
    async close() {
      await parts.close().catch(() => undefined);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** One group as `group list` shows it: its state, and why it waits (`null` when it does not). */
export interface GroupOverview extends GroupStatus {
  readonly waitingFor: string | null;
}

/** Every group, the crawl-wide cap, and whether a crawl has published the limits shown. */
export interface GroupList {
  readonly groups: readonly GroupOverview[];
  readonly global: GlobalStatus;
  /** False until a crawl stored its policy: the limits shown are then the defaults. */
  readonly policyPublished: boolean;
}

/** What `crawlq group list` and the dashboard show about the fleet's groups, with the limits in force. */
export async function listGroups(services: FleetAdminServices, now = Date.now()): Promise<GroupList> {
  // Reads the fleet's policy first, so the limits listed are the ones in force.
  const policy = await services.limiter.getPolicy();
  const [groups, waits, global] = await Promise.all([
    services.limiter.list(),
    readGroupWaits(services.redis, services.config.namespace, now),
    services.limiter.globalStatus(),
  ]);
  const waitingFor = waitingForOf(groups, waits, now);
  return { groups: groups.map((status) => ({ ...status, waitingFor: waitingFor.get(status.group) ?? null })), global, policyPublished: policy !== null };
}

/**
 * Why each waiting group waits: the workers' record (robots.txt, pause), else
 * a pause in force that no job has run into yet (an admin's, say).
 */
function waitingForOf(groups: readonly GroupStatus[], waits: readonly GroupWait[], now: number): Map<string, string> {
  const waitingFor = new Map<string, string>();
  for (const wait of waits) waitingFor.set(wait.group, describeGroupWait(wait, now));
  for (const status of groups) {
    if (waitingFor.has(status.group) || status.pausedUntil === null || status.pausedUntil <= now) continue;
    waitingFor.set(status.group, `pause (${status.pauseReason ?? 'no reason given'}), ${Math.ceil((status.pausedUntil - now) / 1000)} s left`);
  }
  return waitingFor;
}

/**
 * Pauses a group for the whole fleet (capped by the policy's longest pause)
 * and records it as the group's reason to wait, so its wait shows and counts
 * toward --max-blocked from now.
 */
export async function pauseGroup(services: FleetAdminServices, group: string, forMs: number): Promise<void> {
  await services.limiter.pause(group, forMs, 'admin');
  await new GroupWaits(services.redis, services.config.namespace).note(group, { cause: 'pause', until: Date.now() + forMs, label: 'admin pause' });
}

/**
 * Lifts a group's pause for the whole fleet and wakes the group's jobs that
 * were deferred until the pause would have ended: without this they would sit
 * in the delayed set until then. Returns how many jobs were woken.
 */
export async function resumeGroup(services: FleetAdminServices, group: string): Promise<number> {
  await services.limiter.resume(group);
  // Its "waiting for" record ends with the pause (a robots.txt wait comes back with the next deferral).
  await services.redis.hdel(groupWaitsKey(services.config.namespace), group);
  let woken = 0;
  for (const queue of services.queues) {
    for (let start = 0; ; start += PAGE) {
      const jobs = await queue.getDelayed(start, start + PAGE - 1);
      if (jobs.length === 0) break;
      for (const job of jobs) {
        if (job.data.group !== group) continue;
        // Another worker may have promoted or taken it meanwhile; that is fine.
        await job.promote().then(
          () => (woken += 1),
          () => undefined,
        );
      }
      if (jobs.length < PAGE) break;
    }
  }
  return woken;
}
