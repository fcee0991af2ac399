import { isKnownCluster, openCluster, type RedisClient } from '@crawlq/redis';
import { Redis, type RedisOptions } from 'ioredis';
import { BoundedRead } from './bounded-read.js';
import type { HealthReport } from './metrics-server.js';

/**
 * A connection of its own for health checks and gauges: it fails fast while
 * Redis is down (no offline queue) and keeps reconnecting, so `/healthz`
 * turns 503 within a second and back to 200 when Redis returns. A cluster
 * URL gets a Cluster client: the gauges read the crawl's slot, wherever it is.
 */
export function openProbeConnection(url: string): RedisClient {
  const options: RedisOptions = {
    connectionName: `crawlq:${process.pid}:metrics`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  };
  const redis = isKnownCluster(url) ? openCluster(url, options) : new Redis(url, options);
  redis.on('error', () => undefined); // Health answers carry the error; the log would repeat it every retry.
  return redis;
}

/** Liveness of a process's Redis, kept current in the background so a probe never waits for Redis. */
export interface RedisHealthWatch {
  /** The latest verdict: healthy while the last PING was answered and none since has gone unanswered past the timeout. */
  report(): HealthReport;
  stop(): void;
}

/**
 * PINGs `redis` every `intervalMs`, one at a time, each given `timeoutMs`. A
 * probe reads the verdict from memory: a frozen Redis (its connection open,
 * nothing answering) would otherwise hold every probe for the whole timeout,
 * as long as a kubelet waits for the answer.
 */
export function watchRedisHealth(redis: RedisClient, options: { readonly intervalMs?: number; readonly timeoutMs?: number } = {}): RedisHealthWatch {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const pings = new BoundedRead(() => redis.ping(), { maxAgeMs: 0, timeoutMs, what: 'PING' });
  void pings.current(0);
  const timer = setInterval(() => void pings.current(0), options.intervalMs ?? 500);
  timer.unref();
  return {
    report() {
      const { ok, value, error } = pings.status();
      if (ok) return { ok: true, detail: 'ok' };
      return { ok: false, detail: `redis unreachable: ${error?.message ?? (value === undefined ? 'no answer yet' : 'no answer')}` };
    },
    stop: () => clearInterval(timer),
  };
}
