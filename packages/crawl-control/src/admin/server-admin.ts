import { DEFAULT_SERVER_POLICY, paceIntervalMs, ServerLimitsBook, type ServerStatus } from '@crawlq/group-limiter';
import type { RedisClient } from '@crawlq/redis';
import type { CrawlServices } from '../crawl-services.js';

/** One server as `server list` shows it: the limiter's counters and the hosts the crawl resolved to it. */
export interface ServerOverview extends Omit<ServerStatus, 'lastAdmitAt'> {
  /** Host names whose agreed address is on this server, sorted. */
  readonly hosts: readonly string[];
}

type AdminServices = Pick<CrawlServices, 'redis' | 'limiter' | 'config' | 'frontier'>;

/**
 * Every server of the crawl: those the server level counted, and those
 * hosts were resolved to (an `unlimited` range is never counted, but its
 * hosts show), with the limits of the policy in force.
 */
export async function listServers(services: AdminServices): Promise<ServerOverview[]> {
  const policy = await services.limiter.getPolicy();
  const serverPolicy = policy?.servers ?? DEFAULT_SERVER_POLICY;
  const book = new ServerLimitsBook(serverPolicy);
  const [statuses, hosts] = await Promise.all([services.limiter.servers(), readResolvedHosts(services.redis, services.config.namespace)]);
  const byServer = new Map<string, string[]>();
  for (const [host, address] of hosts) {
    let server: string;
    try {
      server = book.serverFor(address).server;
    } catch {
      continue;
    }
    byServer.set(server, [...(byServer.get(server) ?? []), host]);
  }
  const overviews = new Map<string, ServerOverview>();
  for (const status of statuses) overviews.set(status.server, { ...status, hosts: (byServer.get(status.server) ?? []).sort() });
  for (const [server, names] of byServer) {
    if (overviews.has(server)) continue;
    const target = book.serverFor(server.split('/')[0] ?? server);
    overviews.set(server, {
      server,
      limits: target.limits,
      rule: target.rule ?? null,
      paceMs: policy !== null && target.limits.rate !== null ? paceIntervalMs(target.limits.rate, policy) : 0,
      inFlight: target.limits.concurrency === null ? null : 0,
      admitted: 0,
      deferred: 0,
      waiting: 0,
      hosts: names.sort(),
    });
  }
  return [...overviews.values()].sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
}

/** The servers behind each group: the servers of the hosts resolved for the crawl that fall in it. */
export async function serversOfGroups(services: AdminServices): Promise<Map<string, string[]>> {
  const policy = await services.limiter.getPolicy();
  const book = new ServerLimitsBook(policy?.servers ?? DEFAULT_SERVER_POLICY);
  const hosts = await readResolvedHosts(services.redis, services.config.namespace);
  const groups = new Map<string, Set<string>>();
  for (const [host, address] of hosts) {
    let group: string;
    let server: string;
    try {
      group = services.frontier.groupOf(`http://${host.includes(':') ? `[${host}]` : host}/`);
      server = book.serverFor(address).server;
    } catch {
      continue;
    }
    groups.set(group, (groups.get(group) ?? new Set()).add(server));
  }
  return new Map([...groups].map(([group, servers]) => [group, [...servers].sort()]));
}

/** Hash host -> address of every host resolved for the crawl: the workers' address books write it, `server list` reads it. */
export function resolvedHostsKey(namespace: string): string {
  return `${namespace}:dns-hosts`;
}

/** Every host resolved for the crawl with the address it was last given (`server list`'s hosts). */
export async function readResolvedHosts(redis: RedisClient, namespace: string): Promise<Map<string, string>> {
  return new Map(Object.entries(await redis.hgetall(resolvedHostsKey(namespace))));
}
