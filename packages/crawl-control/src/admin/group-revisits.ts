import type { CrawlqConfig } from '@crawlq/config';
import { readRevisitGroups, readShardNamespaces, type RevisitGroupsRead } from '@crawlq/frontier';
import { politenessGroupOf } from '@crawlq/urls';
import type { FleetAdminServices } from '../crawl-services.js';
import { DefinitionStore } from '../definition-store.js';

/**
 * Each group's continuous crawl figures (see `readRevisitGroups`), its due
 * URLs grouped as the crawl groups them: by the grouping of the definition
 * in force (`--group-by`, `groupRules`), read from Redis, so a process that
 * was given no crawl options (the dashboard) counts them as the workers do.
 */
export async function listGroupRevisits(services: FleetAdminServices): Promise<RevisitGroupsRead> {
  const { redis } = services;
  const namespace = services.config.namespace;
  const [definition, shards] = await Promise.all([new DefinitionStore(redis, namespace).read(), readShardNamespaces(redis, namespace)]);
  // The stored values were validated against the option table when read.
  const values = definition?.values ?? {};
  const grouping = {
    groupBy: values.groupBy === 'domain' ? ('domain' as const) : ('host' as const),
    groupRules: Array.isArray(values.groupRules) ? (values.groupRules as CrawlqConfig['groupRules']) : [],
  };
  return readRevisitGroups(redis, shards, { groupOf: (url) => politenessGroupOf(url, grouping) });
}
