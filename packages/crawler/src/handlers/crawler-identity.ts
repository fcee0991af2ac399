import { stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import { CrawlerMismatchError } from '../errors.js';
import { BUILT_IN_CRAWLER } from './load-crawler.js';

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
