import { ConfigError } from '@crawlq/config';
import { stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import { BUILT_IN_CRAWLER } from './load-crawler.js';

/** This process runs another crawler than the crawl in its namespace: exit code 2, one line. */
export class CrawlerMismatchError extends ConfigError {
  override readonly name = 'CrawlerMismatchError';
  readonly fleet: string;
  readonly own: string;
  constructor(own: string, fleet: string, namespace: string) {
    super(
      '--crawler',
      `the crawl in namespace "${namespace}" runs crawler ${fleet}, this process runs ${own}: every worker of a crawl must run the same crawler code (start it with the same file, or use another --namespace)`,
    );
    this.fleet = fleet;
    this.own = own;
  }
}

/**
 * Stores this process's crawler in the crawl definition's hash when the crawl
 * has none yet (the first process wins, atomically), and refuses to go on
 * when it has another: pages of one crawl are handled by one code.
 * @param identity `name@hash`, or undefined for the built-in page record
 * @throws CrawlerMismatchError
 */
export async function claimCrawler(redis: RedisClient, namespace: string, identity: string | undefined): Promise<void> {
  const own = identity ?? BUILT_IN_CRAWLER;
  const key = `${stateKeyPrefix(namespace)}:definition`;
  const replies = (await redis.multi().hsetnx(key, 'crawler', own).hget(key, 'crawler').exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
  const fleet = replies[1]?.[1];
  if (typeof fleet === 'string' && fleet !== own) throw new CrawlerMismatchError(own, fleet, namespace);
}
