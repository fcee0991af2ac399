import type { RedisClient } from '@crawlq/redis';

/**
 * Whether Redis answers a PING within `ms`. A stopped server (SIGSTOP, a
 * hung host) keeps the connection open and never replies: no 'close' event
 * says so, only a command that goes unanswered.
 */
export async function redisAnswersWithin(redis: RedisClient, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms).unref()));
  try {
    return await Promise.race([redis.ping().then(() => true, () => false), silent]);
  } finally {
    clearTimeout(timer);
  }
}
