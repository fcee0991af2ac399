import { crawlJobOptions, type CrawlJobPolicy, type CrawlQueue } from './queues.js';

/** KEYS of BullMQ's addPrioritizedJob script, in its order. */
const ADD_PRIORITIZED_KEYS = ['marker', 'meta', 'id', 'prioritized', 'delayed', 'completed', 'active', 'events', 'pc'] as const;

/** The crawl queue's keys `write_crawl_job` takes, then the prefix of its job hashes. */
export function crawlJobWriteKeys(queue: CrawlQueue): { readonly queueKeys: readonly string[]; readonly jobPrefix: string } {
  const keys = queue.keys as Record<string, string>;
  const queueKeys = ADD_PRIORITIZED_KEYS.map((name) => {
    const key = keys[name];
    if (key === undefined) throw new Error(`BullMQ queue key '${name}' not found: the pinned BullMQ version changed its key layout`);
    return key;
  });
  return { queueKeys, jobPrefix: queue.toKey('') };
}

/** A crawl job's options as `write_crawl_job` takes them (JSON; the priority is set per job). */
export function crawlJobOptionsJson(policy: CrawlJobPolicy): string {
  return JSON.stringify(crawlJobOptions(policy));
}
