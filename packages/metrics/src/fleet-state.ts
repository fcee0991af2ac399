import { readCrawlProgress, readRevisitProgress, readShardNamespaces, readTopRevisitGroups, type RevisitGroupFigures, type RevisitProgress } from '@crawlq/frontier';
import { createShardLimiters, mergeServerStatuses, type GroupLimiter } from '@crawlq/group-limiter';
import { gateKeyPrefix, type RedisClient } from '@crawlq/redis';
import { BoundedRead, type BoundedReadResult } from './bounded-read.js';

export interface QueueJobCounts {
  /** URLs admitted and waiting in their groups' backlogs (released into the queue as their groups can take them). */
  readonly backlog: number;
  readonly waiting: number;
  readonly delayed: number;
  readonly active: number;
  /** Backlog URLs, waiting jobs, and delayed jobs whose time is within the frontier's DUE_WINDOW_MS: what an autoscaler should read. */
  readonly due: number;
}

export interface GroupCounts {
  /** Groups with at least one request in flight. */
  readonly active: number;
  /** Groups under a pause (Retry-After, robots.txt unreachable, an admin). */
  readonly paused: number;
  /** Groups at their concurrency cap (as adaptive pacing has it now): their next job waits for a request to finish. */
  readonly blocked: number;
  /** Groups whose adaptive pace is below their limits (`--adaptive`). */
  readonly slowed: number;
}

/** Servers (addresses) the server level counted, fleet-wide. */
export interface ServerCounts {
  /** Servers the server level admitted a start for. */
  readonly known: number;
  /** Servers with a request in flight (only servers with a concurrency cap count their requests). */
  readonly active: number;
  /** Servers at their concurrency cap. */
  readonly blocked: number;
  /** Servers with denied requests waiting for a slot on them now. */
  readonly waiting: number;
}

export interface FleetState {
  readonly queue: QueueJobCounts;
  readonly groups: GroupCounts;
  readonly servers: ServerCounts;
  /** The continuous crawl's schedule and revisit counters (zeros without --revisit). */
  readonly revisits: RevisitProgress;
  /** The REVISIT_METRIC_GROUPS groups with the most known URLs, their revisit counters (no due counts: see REVISIT_METRIC_GROUPS). */
  readonly revisitGroups: readonly RevisitGroupFigures[];
}

/**
 * Groups whose revisit figures `/metrics` labels by group: those with the
 * most known URLs. A crawl may have thousands of groups, and every group a
 * label adds a series per figure; the rest are in the fleet-wide gauges and
 * `crawlq group list --revisits`. Due counts are not labelled by group: the
 * schedule keeps due times by time, not group, so they take a pass over the
 * hour's schedule entries, too much at every scrape.
 */
export const REVISIT_METRIC_GROUPS = 10;

export interface FleetStateReaderOptions {
  readonly redis: RedisClient;
  readonly namespace: string;
  /**
   * A read younger than this is served as is: Prometheus, the stats line and
   * several scrapers share one read.
   * @default 2000
   */
  readonly maxAgeMs?: number;
  /**
   * A read unanswered this long counts as failed (a frozen or unreachable
   * Redis); the next asker starts another.
   * @default 3000
   */
  readonly readTimeoutMs?: number;
}

/**
 * Reads the fleet's queue and group state from Redis, so any one process (a
 * worker, the dashboard) can report the whole fleet. One read at a time, each
 * with its own timeout; `snapshot()` waits for one no longer than it is told,
 * so a scrape during an outage gets the last good figures at once.
 */
export class FleetStateReader {
  readonly #redis: RedisClient;
  /** One limiter per shard, for the shard count last read (see `readShardNamespaces`). */
  #limiters: { readonly shards: readonly string[]; readonly limiters: readonly GroupLimiter[] } = { shards: [], limiters: [] };
  readonly #namespace: string;
  readonly #reads: BoundedRead<FleetState>;

  constructor(options: FleetStateReaderOptions) {
    this.#redis = options.redis;
    this.#namespace = options.namespace;
    this.#reads = new BoundedRead(() => this.#readNow(), { maxAgeMs: options.maxAgeMs ?? 2_000, timeoutMs: options.readTimeoutMs ?? 3_000, what: 'fleet read from Redis' });
  }

  /** The fleet's state, read now unless the last read is fresh; rejects when Redis does not answer within the read timeout. */
  read(): Promise<FleetState> {
    return this.#reads.read();
  }

  /**
   * The last good figures (`value`), after waiting at most `waitMs` for a
   * read: settles within `waitMs` whatever Redis does, and never rejects.
   */
  snapshot(waitMs: number): Promise<BoundedReadResult<FleetState>> {
    return this.#reads.current(waitMs);
  }

  async #readNow(): Promise<FleetState> {
    const shards = await readShardNamespaces(this.#redis, this.#namespace);
    const [progress, revisits, revisitGroups] = await Promise.all([
      readCrawlProgress(this.#redis, this.#namespace, { shards }),
      readRevisitProgress(this.#redis, shards),
      readTopRevisitGroups(this.#redis, shards, REVISIT_METRIC_GROUPS),
    ]);
    const { backlog, waiting, delayed, active } = progress;
    if (this.#limiters.shards.join() !== shards.join()) {
      this.#limiters = { shards, limiters: createShardLimiters(this.#redis, shards.map(gateKeyPrefix)) };
    }
    const groups = { active: 0, paused: 0, blocked: 0, slowed: 0 };
    const lists = await Promise.all(this.#limiters.limiters.map((limiter) => limiter.list()));
    for (const group of lists.flat()) {
      if (group.inFlight > 0) groups.active += 1;
      if (group.pausedUntil !== null) groups.paused += 1;
      if (group.effectiveConcurrency !== null && group.inFlight >= group.effectiveConcurrency) groups.blocked += 1;
      if (group.paceFactor < 1) groups.slowed += 1;
    }
    const servers = { known: 0, active: 0, blocked: 0, waiting: 0 };
    for (const server of mergeServerStatuses(await Promise.all(this.#limiters.limiters.map((limiter) => limiter.servers())))) {
      servers.known += 1;
      if ((server.inFlight ?? 0) > 0) servers.active += 1;
      if (server.limits.concurrency !== null && (server.inFlight ?? 0) >= server.limits.concurrency) servers.blocked += 1;
      if (server.waiting > 0) servers.waiting += 1;
    }
    return { queue: { backlog, waiting, delayed, active, due: backlog + waiting + progress.delayedDue }, groups, servers, revisits, revisitGroups };
  }
}
