import { Redis, ReplyError } from 'ioredis';
import { isClusterNode } from './cluster.js';
import { RedisDatabaseError } from './errors.js';

/** The database a redis:// URL selects, read as ioredis reads it (the path, else `?db=`); 0 when none. */
export function databaseIndexOf(url: string): number {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 0;
  }
  const text = parsed.pathname.length > 1 ? parsed.pathname.slice(1) : (parsed.searchParams.get('db') ?? '');
  const index = Number.parseInt(text, 10);
  return Number.isNaN(index) ? 0 : index;
}

/**
 * ioredis selects a URL's database after connecting and, when the server
 * refuses, only emits an `error` event: every command then runs in database 0
 * of the server. `crawl` wrote its crawl there and `status` read an empty
 * database 0 as `"done":true`. This selects it again and turns a
 * refusal into a RedisDatabaseError. A cluster node refuses every SELECT
 * but 0; that gets its own sentence.
 * @throws RedisDatabaseError when the server refuses the URL's database
 */
export async function assertDatabase(redis: Redis, url: string): Promise<void> {
  const database = databaseIndexOf(url);
  if (database === 0) return;
  if ((await isClusterNode(redis)) === true) assertClusterDatabase(url);
  try {
    await redis.select(database);
  } catch (error) {
    if (!(error instanceof ReplyError)) throw error; // the connection failed: not a database question
    throw new RedisDatabaseError(url, { database, databases: await databaseCount(redis) }, { cause: error });
  }
}

/**
 * For a URL found to name a cluster (by its own node, or by a seed when that
 * node was down): a cluster has only database 0.
 * @throws RedisDatabaseError when the URL names another
 */
export function assertClusterDatabase(url: string): void {
  const database = databaseIndexOf(url);
  if (database !== 0) throw new RedisDatabaseError(url, { database, databases: 1, cluster: true });
}

/**
 * Checks the URL's database on a short-lived connection before anything else
 * uses the URL (every connection of BullMQ, the dead-letter store and the
 * health probe is opened from the URL alone). No connection at all for
 * database 0. A server that cannot be reached is left to whoever uses the
 * URL next, which reports that as it always did.
 * @throws RedisDatabaseError when the server refuses the URL's database
 */
export async function checkDatabase(url: string): Promise<void> {
  if (databaseIndexOf(url) === 0) return;
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 5_000,
    connectionName: `crawlq:${process.pid}:database-check`,
  });
  redis.on('error', () => undefined); // ioredis's own failed SELECT lands here; ours below says it
  try {
    try {
      await redis.connect();
    } catch {
      return;
    }
    await assertDatabase(redis, url);
  } finally {
    redis.disconnect();
  }
}

async function databaseCount(redis: Redis): Promise<number | undefined> {
  try {
    const reply = (await redis.config('GET', 'databases')) as string[];
    const count = Number(reply[1]);
    return Number.isInteger(count) && count > 0 ? count : undefined;
  } catch {
    return undefined; // CONFIG may be disabled on managed Redis: say what SELECT said instead
  }
}

