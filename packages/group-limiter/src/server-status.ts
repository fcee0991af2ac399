import type { RedisClient } from '@crawlq/redis';
import type { ServerLevel, ServerKeys } from './server-level.js';
import type { ServerLimits } from './server-policy.js';

/** What an admin sees about one server (an address, or an IPv6 /64, behind one or more groups). */
export interface ServerStatus {
  readonly server: string;
  /** Its limits under the current policy (a rule's, or the defaults). */
  readonly limits: ServerLimits;
  /** The server rule that matched (its name or range), if any. */
  readonly rule: string | null;
  /** Spacing the gate keeps between this server's starts (ms, all shards together); 0 = no rate. */
  readonly paceMs: number;
  /** Requests in flight (leases held); `null` when the server has no concurrency cap (nothing is counted then). */
  readonly inFlight: number | null;
  /** Starts the server level admitted. */
  readonly admitted: number;
  /** Requests the server level denied (each waits for a slot on the server's horizon). */
  readonly deferred: number;
  /** Denied requests whose wake slot on the server's horizon is still ahead: what waits on it now. */
  readonly waiting: number;
  readonly lastAdmitAt: number | null;
}

const CHUNK = 500;

/** Every server the level admitted a start for under these keys, sorted by name. */
export async function readServerStatuses(
  redis: RedisClient,
  keys: ServerKeys,
  layout: { readonly level: ServerLevel; readonly shards: number; readonly groupKey: (group: string) => string },
): Promise<ServerStatus[]> {
  const { level, shards } = layout;
  const servers = (await redis.smembers(keys.servers)).sort();
  const [seconds = '0', micros = '0'] = await redis.time();
  const now = Number(seconds) * 1000 + Number(micros) / 1000;
  const statuses: ServerStatus[] = [];
  for (let start = 0; start < servers.length; start += CHUNK) {
    const chunk = servers.slice(start, start + CHUNK);
    const pipeline = redis.pipeline();
    for (const server of chunk) {
      pipeline.hmget(keys.server(server), 'admitted', 'deferred', 'wakeAt', 'lastAdmitAt', 'solo');
      pipeline.zcount(keys.leases(server), `(${now}`, '+inf');
    }
    const replies = (await pipeline.exec()) ?? [];
    const fields = chunk.map((_, index) => (replies[index * 2]?.[1] ?? []) as (string | null)[]);
    const held = await readHolds(redis, { servers: chunk, fields }, layout.groupKey);
    chunk.forEach((server, index) => {
      const [stored, deferred, wakeAt, storedLastAdmitAt] = fields[index] ?? [];
      const hold = held.get(server);
      const admitted = Number(stored ?? 0) + (hold?.admitted ?? 0);
      const lastAdmitAt = hold?.lastAdmitAt ?? storedLastAdmitAt;
      const leases = Number(replies[index * 2 + 1]?.[1] ?? 0);
      const target = serverTarget(level, server);
      const interval = level.intervalMs(target);
      const step = interval > 0 ? interval : 10;
      const wake = Number(wakeAt ?? 0);
      statuses.push({
        server,
        limits: target.limits,
        rule: target.rule ?? null,
        paceMs: interval / shards,
        inFlight: target.limits.concurrency === null ? null : leases,
        admitted,
        deferred: Number(deferred ?? 0),
        waiting: wake > now ? Math.ceil((wake - now) / step) : 0,
        lastAdmitAt: lastAdmitAt ? Number(lastAdmitAt) : null,
      });
    });
  }
  return statuses;
}

/**
 * The servers of a chunk that a group holds alone (see lua/server-gate.lua):
 * their starts since the hold began are counted in the holder's hash, as is
 * their last start.
 */
async function readHolds(
  redis: RedisClient,
  read: { readonly servers: readonly string[]; readonly fields: readonly (readonly (string | null)[])[] },
  groupKey: (group: string) => string,
): Promise<Map<string, { readonly admitted: number; readonly lastAdmitAt: string | null }>> {
  const holds = read.servers.flatMap((server, index) => {
    const holder = read.fields[index]?.[4];
    return holder ? [{ server, holder }] : [];
  });
  const found = new Map<string, { readonly admitted: number; readonly lastAdmitAt: string | null }>();
  if (holds.length === 0) return found;
  const pipeline = redis.pipeline();
  for (const { holder } of holds) pipeline.hmget(groupKey(holder), 'soloAt', 'admitted', 'soloBase', 'lastAdmitAt');
  const replies = (await pipeline.exec()) ?? [];
  holds.forEach(({ server }, index) => {
    const [soloAt, admitted, soloBase, lastAdmitAt] = (replies[index]?.[1] ?? []) as (string | null)[];
    // A holder whose fields name another server (or none) no longer holds this one.
    if (soloAt === server) found.set(server, { admitted: Math.max(0, Number(admitted ?? 0) - Number(soloBase ?? 0)), lastAdmitAt: lastAdmitAt ?? null });
  });
  return found;
}

/** A server's name is its address, or its network with `/prefix`: the network's address stands for it. */
function serverTarget(level: ServerLevel, server: string): ReturnType<ServerLevel['target']> {
  const slash = server.indexOf('/');
  return level.target(slash === -1 ? server : server.slice(0, slash));
}

/** The servers of several shards as one list: each shard counts its own starts and leases of a server. */
export function mergeServerStatuses(lists: readonly (readonly ServerStatus[])[]): ServerStatus[] {
  const merged = new Map<string, ServerStatus>();
  for (const status of lists.flat()) {
    const seen = merged.get(status.server);
    merged.set(
      status.server,
      seen === undefined
        ? status
        : {
            ...seen,
            inFlight: seen.inFlight === null || status.inFlight === null ? (seen.inFlight ?? status.inFlight) : seen.inFlight + status.inFlight,
            admitted: seen.admitted + status.admitted,
            deferred: seen.deferred + status.deferred,
            waiting: seen.waiting + status.waiting,
            lastAdmitAt: Math.max(seen.lastAdmitAt ?? 0, status.lastAdmitAt ?? 0) || null,
          },
    );
  }
  return [...merged.values()].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
}
