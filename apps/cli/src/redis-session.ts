import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CrawlqConfig } from '@crawlq/config';
import { resolveRedis, type RedisHandle } from '@crawlq/redis';
import { pathError } from './path-errors.js';

/**
 * Runs `body` with a Redis URL: REDIS_URL when set, else the private
 * redis-server under --state-dir (started or joined, released afterwards).
 */
export async function withRedis<T>(config: CrawlqConfig, body: (url: string, handle: RedisHandle) => Promise<T>): Promise<T> {
  if (config.redisUrl === undefined) {
    // The private server lives there: a state directory that cannot be made is an input error naming its option.
    const dir = resolve(config.stateDir);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw pathError('--state-dir', `cannot create directory ${dir}`, error);
    }
  }
  const handle = await resolveRedis({ url: config.redisUrl, seeds: config.redisSeeds, stateDir: config.stateDir });
  try {
    return await body(handle.url, handle);
  } finally {
    await handle.release();
  }
}
