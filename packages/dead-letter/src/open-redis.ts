import { Redis } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';
import { DeadLetterInputError } from './errors.js';

/**
 * Our own ioredis connection beside BullMQ's, for the dead-letter index and
 * the alert accumulators (BullMQ 6.7 wraps its client behind a narrow
 * interface). Accepts what BullMQ accepts: options (with an optional `url`)
 * or an ioredis instance, which is duplicated so closing ours leaves it open.
 */
export function openRedis(connection: ConnectionOptions): Redis {
  if (connection instanceof Redis) return connection.duplicate();
  if (typeof (connection as { duplicate?: unknown }).duplicate === 'function') {
    throw new DeadLetterInputError('pass connection options or an ioredis Redis instance (other clients are not supported)');
  }
  const { url, skipVersionCheck: _skip, ...rest } = connection as { url?: string; skipVersionCheck?: boolean } & Record<string, unknown>;
  const redis = url === undefined ? new Redis(rest) : new Redis(url, rest);
  // Failures reach callers as rejected commands; the event would only be noise.
  redis.on('error', () => undefined);
  return redis;
}
