import type { CrawlqConfig } from '@crawlq/config';
import type { CrawlJobPolicy } from '@crawlq/queue';

/** The attempts and backoff of crawl jobs a config describes: the one place the option names map to BullMQ's policy. */
export function jobPolicyFrom(config: CrawlqConfig): CrawlJobPolicy {
  return { attempts: config.attempts, backoffMs: config.backoff };
}
