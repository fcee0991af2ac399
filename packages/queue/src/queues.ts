import type { Cluster } from 'ioredis';
import { Queue, Worker, type ConnectionOptions, type JobsOptions, type Processor, type WorkerOptions } from 'bullmq';
import type { CrawlJobData } from './job-data.js';
import { clusterClientFor, queuePrefix } from '@crawlq/redis';
import { QUEUE_NAMES, type CRAWL_JOB_NAME, type QueueName } from './names.js';

/** Options every crawl job gets. */
export interface CrawlJobPolicy {
  /** Queue-level attempts before the job is dead-lettered. */
  readonly attempts: number;
  /** Base of the exponential backoff between attempts, in ms. */
  readonly backoffMs: number;
}

/**
 * Retention for the crawl Worker: a completed job is removed as it completes,
 * failed jobs are kept (BullMQ's default) until the dead-letter queue has
 * recorded them. Results live in the sink and the crawl's own counters; a
 * finished job's id need not stay to de-duplicate, because the frontier marks
 * a URL seen in the same step that queues it, so no URL becomes a job twice.
 * Removing at once also spares BullMQ's finish step the completed set and its
 * trimming (its commands inside Redis went from 26.5 to 23.4 per page in one
 * MONITOR-attributed crawl of 1,000 pages).
 * Set on the Worker, not on each job: job options are stored in every job's
 * hash, and a million queued URLs would carry the same bytes a million times.
 */
// `{ count: 0 }`, not `true`: BullMQ 6.7's Worker passes a boolean through to its finish script, which fails on it.
export const CRAWL_JOB_RETENTION: Pick<WorkerOptions, 'removeOnComplete'> = { removeOnComplete: { count: 0 } };

export function crawlJobOptions(policy: CrawlJobPolicy): JobsOptions {
  return {
    attempts: policy.attempts,
    backoff: { type: 'exponential', delay: policy.backoffMs, jitter: 0.5 },
  };
}

export type CrawlQueue = Queue<CrawlJobData, unknown, typeof CRAWL_JOB_NAME>;

/** Where a namespace's queue lives, and who hears its connection errors. */
export interface OpenQueueOptions {
  readonly connection: ConnectionOptions;
  readonly namespace: string;
  /**
   * Sees the queue's connection errors. The same failures reject the calls
   * made while Redis is away, so by default they are dropped: without a
   * listener the event would be an uncaught error, and logging each
   * reconnect attempt would only be noise.
   */
  readonly onError?: (error: Error) => void;
}

/** `openQueue`'s options plus the Worker's own settings (concurrency, locks, retention...); the key prefix is the namespace's. */
export interface OpenWorkerOptions extends OpenQueueOptions, Omit<WorkerOptions, 'connection' | 'prefix'> {}

const dropErrors = (): void => undefined;

/**
 * Opens one of a namespace's queues (see `QUEUE_NAMES`) under the namespace's
 * key prefix, with an error listener (see `OpenQueueOptions.onError`). Every
 * BullMQ `Queue` of crawlq is opened here, every `Worker` by {@link openWorker}. The job types are named by the
 * package that owns the jobs: `openCrawlQueue` here, the dead-letter store
 * and the alerts for theirs; a viewer that only lists jobs leaves them unknown.
 */
export function openQueue<Data = unknown, Result = unknown, JobName extends string = string>(
  name: QueueName,
  options: OpenQueueOptions,
): Queue<Data, Result, JobName> {
  const cluster = clusterClientFor(options.connection);
  const queue = new Queue<Data, Result, JobName>(name, { connection: cluster ?? options.connection, prefix: queuePrefix(options.namespace) });
  queue.on('error', options.onError ?? dropErrors);
  if (cluster !== undefined) closeWith(queue, cluster);
  return queue;
}

/**
 * Starts a BullMQ `Worker` on one of a namespace's queues, under the same key
 * prefix and error-listener policy as {@link openQueue}. Every production
 * `Worker` of crawlq is started here.
 */
export function openWorker<Data = unknown, Result = unknown, JobName extends string = string>(
  name: QueueName,
  processor: Processor<Data, Result, JobName>,
  options: OpenWorkerOptions,
): Worker<Data, Result, JobName> {
  const { namespace, onError, connection, ...settings } = options;
  // A Worker blocks on its connection: BullMQ refuses a client instance that would give up on a command.
  const cluster = clusterClientFor(connection, { maxRetriesPerRequest: null });
  if (cluster !== undefined) boundBlockingReads(cluster);
  const worker = new Worker<Data, Result, JobName>(name, processor, { ...settings, connection: cluster ?? connection, prefix: queuePrefix(namespace) });
  worker.on('error', onError ?? dropErrors);
  if (cluster !== undefined) {
    boundBlockingWaits(worker);
    closeWith(worker, cluster);
  }
  return worker;
}

/**
 * ioredis' own limit (16 redirections, about 5 s at 300 ms apart) for BullMQ's
 * blocking reads. BullMQ reads jobs (BZPOPMIN) on a duplicate of the Worker's
 * client; one that chases an absent master without end was seen to hold
 * `worker.close()` for good after the master came back. Bounded, the read
 * fails and BullMQ's loop reads again; the Worker's other commands (job
 * completion, locks) keep waiting for the master as long as it takes.
 */
const BLOCKING_READ_REDIRECTIONS = 16;

function boundBlockingReads(cluster: Cluster): void {
  const duplicate = cluster.duplicate.bind(cluster);
  cluster.duplicate = (startupNodes?: unknown[], options: object = {}) => duplicate(startupNodes, { ...options, maxRedirections: BLOCKING_READ_REDIRECTIONS });
}

/**
 * How long BullMQ's fetch loop may wait for its blocking connection to
 * recover after a failed or overdue read. BullMQ 6.7 waits for it without a
 * bound: on a Cluster client that came through a master's restart, the
 * recovery waits for a `ready` event that had already passed, and the
 * Worker's loop never fetches again while the client itself serves commands.
 * A whole fleet stopped taking jobs that way (every process, the same shards)
 * after a master restart. Bounded, the loop goes on: its next read runs on
 * the client as it is, and a client that is really gone fails that read and
 * is recovered again.
 */
const BLOCKING_RECOVERY_MS = 5_000;
/**
 * A backstop over one whole blocking wait: BullMQ's longest block (10 s),
 * its own overdue-read margin (1 s) and two recoveries, with room to spare.
 * A wait that outlives it resolves as a wait that found nothing, which makes
 * the loop look for a job at once (a marker lost with it only delays a wake).
 */
const BLOCKING_WAIT_SLACK_MS = 11_000 + 2 * BLOCKING_RECOVERY_MS + 5_000;

interface BlockingBackend {
  reconnectBlocking(): Promise<void>;
  waitForJob(blockTimeoutSeconds: number): Promise<unknown>;
}

/** Bounds the blocking waits of a Worker on a cluster (see BLOCKING_RECOVERY_MS); BullMQ's own promises are left to settle whenever they do. */
function boundBlockingWaits(worker: object): void {
  const backend = (worker as unknown as { backend?: Partial<BlockingBackend> }).backend;
  if (typeof backend?.reconnectBlocking !== 'function' || typeof backend.waitForJob !== 'function') {
    // Pinned BullMQ: a version without these would need this looked at again, not silently skipped.
    throw new Error('BullMQ Worker internals changed: backend.reconnectBlocking/waitForJob not found');
  }
  const reconnect = backend.reconnectBlocking.bind(backend);
  const waitForJob = backend.waitForJob.bind(backend);
  backend.reconnectBlocking = () => within(reconnect(), BLOCKING_RECOVERY_MS, undefined);
  backend.waitForJob = (blockTimeoutSeconds: number) => within(waitForJob(blockTimeoutSeconds), blockTimeoutSeconds * 1_000 + BLOCKING_WAIT_SLACK_MS, null);
}

/** `promise`, or `fallback` once `ms` passed; a late rejection of `promise` is dropped. */
function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * BullMQ takes a Redis Cluster only as a client instance, and leaves a client
 * it was given open when it closes (it may be shared). The cluster client
 * `openQueue`/`openWorker` made from a URL is theirs alone: closing the queue
 * or worker closes it too, as BullMQ closes the clients it makes from options.
 */
const QUIT_WAIT_MS = 2_000;

function closeWith(owner: { close(...args: never[]): Promise<void>; disconnect(): Promise<void> }, cluster: Cluster): void {
  const close = owner.close.bind(owner);
  owner.close = async (...args: never[]) => {
    try {
      await close(...args);
    } finally {
      // QUIT waits for replies; a master that is away must not hold the close.
      await Promise.race([cluster.quit().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, QUIT_WAIT_MS).unref())]);
      cluster.disconnect();
    }
  };
  const disconnect = owner.disconnect.bind(owner);
  owner.disconnect = async () => {
    try {
      await disconnect();
    } finally {
      cluster.disconnect();
    }
  };
}

/** The crawl queue of a namespace, typed (`openQueue` with the default error policy). */
export function openCrawlQueue(connection: ConnectionOptions, namespace: string): CrawlQueue {
  return openQueue<CrawlJobData, unknown, typeof CRAWL_JOB_NAME>(QUEUE_NAMES.crawl, { connection, namespace });
}

/** A crawl queue's jobs by state (`readCrawlProgress` in @crawlq/frontier reads them). */
export interface CrawlCounts {
  readonly waiting: number;
  readonly delayed: number;
  readonly active: number;
  /** Failed jobs not yet dead-lettered (completed jobs are not kept: see CRAWL_JOB_RETENTION). */
  readonly failed: number;
}

/**
 * A key of the crawl queue of a namespace, as BullMQ names it (`<prefix>:<queue>:<name>`),
 * for readers that count without opening a Queue.
 */
export function crawlQueueKey(namespace: string, name: string): string {
  return `${queuePrefix(namespace)}:${QUEUE_NAMES.crawl}:${name}`;
}
