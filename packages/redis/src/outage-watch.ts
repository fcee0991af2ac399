import { Cluster } from 'ioredis';
import type { RedisClient } from './cluster.js';
import { RedisOutageError } from './errors.js';

export interface RedisOutageWatchOptions {
  /** Longest run of "not ready" that is ridden through; unset (or no `onOutage`): outages are only reported. */
  readonly limitMs?: number;
  /** The connection dropped: called once per outage, not once per reconnect attempt. */
  readonly onLost?: () => void;
  /** Ready again after `downMs`, within the limit. */
  readonly onBack?: (downMs: number) => void;
  /**
   * Not ready for longer than `limitMs` in a row: called once, then the watch
   * ends. The connection keeps reconnecting; stopping is the caller's call.
   */
  readonly onOutage?: (error: RedisOutageError) => void;
  /**
   * On a cluster client: a key in the slot the process works on (its
   * crawl's), whose master is probed (see {@link watchRedisOutage}).
   * Without it, PING answered by any node is probed.
   */
  readonly clusterProbeKey?: string;
  /**
   * On a cluster client: keys in every slot the process works on (a crawl of
   * several shards), read per probe; one probe asks each of their masters,
   * and counts as unanswered while any of them is silent. Takes precedence
   * over `clusterProbeKey`.
   */
  readonly clusterProbeKeys?: () => readonly string[];
}

export interface RedisOutageWatch {
  /** True from a lost connection until it is ready again. */
  readonly down: boolean;
  /** Stops watching; call it before closing the connection on purpose. */
  stop(): void;
}

/**
 * Watches a connection that reconnects on its own (ioredis with a
 * `retryStrategy`): a 'close' or 'end' starts the clock, 'ready' stops it, so
 * reconnect attempts that fail in between do not restart it. Only a
 * connection that has been ready before counts as lost; one still in `wait`
 * (lazy, never connected) is not watched until it closes.
 *
 * A cluster client stays 'ready' while one master is away (its commands wait
 * for that master), so it is also probed: a probe of the key's master
 * unanswered for {@link CLUSTER_PROBE_SILENCE_MS} counts as lost, the next
 * answer as back.
 */
export function watchRedisOutage(redis: RedisClient, options: RedisOutageWatchOptions): RedisOutageWatch {
  let lostAt: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let probes: NodeJS.Timeout | undefined;
  let stopped = false;
  const { limitMs, onOutage } = options;
  const lost = (since = performance.now()) => {
    if (stopped || lostAt !== undefined) return;
    lostAt = since;
    if (limitMs !== undefined && onOutage !== undefined) {
      // Unref'd: a process with nothing else left to do has nothing to stop either.
      timer = setTimeout(() => {
        stop();
        onOutage(new RedisOutageError(performance.now() - since, limitMs));
      }, Math.max(0, Math.min(limitMs - (performance.now() - since), MAX_TIMER_MS))).unref();
    }
    options.onLost?.();
  };
  const ready = () => {
    if (stopped || lostAt === undefined) return;
    const downMs = performance.now() - lostAt;
    clearTimeout(timer);
    lostAt = undefined;
    options.onBack?.(downMs);
  };
  function stop() {
    stopped = true;
    clearTimeout(timer);
    clearInterval(probes);
    redis.off('close', onClose).off('end', onClose).off('ready', ready);
  }
  const onClose = () => lost();
  redis.on('close', onClose).on('end', onClose).on('ready', ready);
  if (redis.status !== 'ready' && redis.status !== 'wait') lost();
  const probeKeys = options.clusterProbeKeys ?? (options.clusterProbeKey === undefined ? undefined : () => [options.clusterProbeKey as string]);
  if (redis instanceof Cluster) probes = probeCluster(redis, probeKeys, { lost, back: ready });
  return {
    get down() {
      return lostAt !== undefined;
    },
    stop,
  };
}

/** How long a cluster probe may go unanswered before the master counts as lost. */
export const CLUSTER_PROBE_SILENCE_MS = 3_000;
const CLUSTER_PROBE_EVERY_MS = 1_000;

/** One probe in flight at a time; `lost` is given the moment the silent probe was sent. */
function probeCluster(cluster: Cluster, keys: (() => readonly string[]) | undefined, on: { readonly lost: (since: number) => void; readonly back: () => void }): NodeJS.Timeout {
  const { lost, back } = on;
  let sentAt: number | undefined;
  const probe = () => {
    if (sentAt !== undefined) {
      if (performance.now() - sentAt >= CLUSTER_PROBE_SILENCE_MS) lost(sentAt);
      return;
    }
    if (cluster.status !== 'ready' && cluster.status !== 'connect') return; // not connected yet, or closing: the events say it
    sentAt = performance.now();
    (keys === undefined ? cluster.ping() : Promise.all(keys().map((key) => cluster.exists(key)))).then(
      () => {
        sentAt = undefined;
        back();
      },
      // Refused (the client gave up on the master, or closed): no answer, lost since it was sent; probed again next tick.
      () => {
        const since = sentAt;
        sentAt = undefined;
        if (since !== undefined) lost(since);
      },
    );
  };
  return setInterval(probe, CLUSTER_PROBE_EVERY_MS).unref();
}

/** setTimeout's longest delay (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

