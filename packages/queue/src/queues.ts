import type { Cluster } from 'ioredis';
import { ConnectionClosedError, Queue, Worker, type ConnectionOptions, type JobsOptions, type Processor, type WorkerOptions } from 'bullmq';
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
  if (cluster !== undefined) boundBlockingWaits(worker);
  closeBlockingClientSafely(worker);
  // A client instance the caller passed in is the caller's to end; the clients made from options are the worker's.
  boundQuit(worker, cluster !== undefined || typeof (connection as { duplicate?: unknown }).duplicate !== 'function');
  if (cluster !== undefined) closeWith(worker, cluster);
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
  moveToActive(token: string, name?: string): Promise<unknown>;
  reconnectBlocking(): Promise<void>;
  waitForJob(blockTimeoutSeconds: number): Promise<unknown>;
  disconnectBlocking(wait?: boolean): Promise<void>;
  close(force?: boolean): Promise<void>;
  /** BullMQ's dedicated blocking client (an ioredis Redis, or a Cluster duplicated from ours). */
  readonly blockingClient: Promise<IoredisClient> | undefined;
  /** The Worker's other client: ours (a cluster), the caller's (an instance passed in), or BullMQ's (made from options). */
  readonly client: Promise<IoredisClient>;
}

/** What {@link endClient} uses of an ioredis Redis or Cluster client. */
interface IoredisClient {
  readonly status: string;
  readonly isCluster?: boolean;
  connect(): Promise<void>;
  disconnect(): void;
  once(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
}

/** The Worker's backend, with the `methods` given and its clients. */
function blockingBackendOf(worker: object, methods: readonly ('moveToActive' | 'reconnectBlocking' | 'waitForJob' | 'disconnectBlocking' | 'close')[]): BlockingBackend {
  const backend = (worker as unknown as { backend?: Partial<BlockingBackend> }).backend;
  const missing: string[] = methods.filter((method) => typeof backend?.[method] !== 'function');
  for (const client of ['blockingClient', 'client'] as const) if (!(backend !== undefined && client in backend)) missing.push(client);
  // Pinned BullMQ: a version without these would need this looked at again, not silently skipped.
  if (missing.length > 0) throw new Error(`BullMQ Worker internals changed: backend.${missing.join('/')} not found`);
  return backend as BlockingBackend;
}

/** Bounds the blocking waits of a Worker on a cluster (see BLOCKING_RECOVERY_MS); BullMQ's own promises are left to settle whenever they do. */
function boundBlockingWaits(worker: object): void {
  const backend = blockingBackendOf(worker, ['reconnectBlocking', 'waitForJob']);
  const reconnect = backend.reconnectBlocking.bind(backend);
  const waitForJob = backend.waitForJob.bind(backend);
  backend.reconnectBlocking = () => within(reconnect(), BLOCKING_RECOVERY_MS, undefined);
  backend.waitForJob = (blockTimeoutSeconds: number) => within(waitForJob(blockTimeoutSeconds), blockTimeoutSeconds * 1_000 + BLOCKING_WAIT_SLACK_MS, null);
}

/**
 * BullMQ's close interrupts the Worker's blocking read by disconnecting its
 * blocking client and waiting for ioredis' 'end'. A client that lost its
 * server and waits between two reconnect attempts has no socket to close:
 * ioredis' disconnect() then only cancels the next attempt, so neither 'end'
 * nor the failure of the read it holds ever comes, and close() waited for
 * good. Seen after a master restart (the client still waited out its backoff
 * when the test closed it) and at every close during an outage, on a single
 * node and on a cluster alike. Such a client is ended through an attempt of
 * its own instead, which disconnect() stops as it stops any attempt.
 */
const BLOCKING_DISCONNECT_MS = 5_000;

function closeBlockingClientSafely(worker: { once(event: 'closing' | 'closed', listener: () => void): unknown }): void {
  const backend = blockingBackendOf(worker, ['disconnectBlocking', 'reconnectBlocking', 'waitForJob', 'moveToActive']);
  const disconnect = backend.disconnectBlocking.bind(backend);
  const disconnectOrEnd = async (wait?: boolean): Promise<void> => {
    const client = await backend.blockingClient;
    await (client?.status === 'reconnecting' ? endClient(client) : disconnect(wait));
  };
  // Whatever state ioredis is in, the close goes on: the waits below no longer depend on this client.
  backend.disconnectBlocking = (wait?: boolean) => within(disconnectOrEnd(wait), BLOCKING_DISCONNECT_MS, undefined);

  // Once the Worker closes, its fetch loop stops waiting on that client: a
  // read it still holds fails as on a closed connection (BullMQ then neither
  // retries nor reads a job), and a recovery it waits for is given up.
  const closing = cutOff();
  worker.once('closing', closing.cut);
  const waitForJob = backend.waitForJob.bind(backend);
  backend.waitForJob = (blockTimeoutSeconds: number) => closing.race(() => waitForJob(blockTimeoutSeconds), (_, reject) => reject(new ConnectionClosedError('the worker is closing')));
  const reconnect = backend.reconnectBlocking.bind(backend);
  backend.reconnectBlocking = () => closing.race(reconnect, (resolve) => resolve());

  // Taking the next job runs on the other client, which keeps a command for
  // as long as Redis is away (`maxRetriesPerRequest: null`); close() waits for
  // the fetch loop, so a take sent just before an outage held the close for
  // the whole outage. Once the worker closes, a take on a client that is not
  // connected, or that loses its connection, fails as on a closed
  // connection. A take on a connected client is left to finish: dropping its
  // reply would leave a job active under a lock nobody renews.
  const takesAway = cutOff();
  // The take awaits the client's first connection too: a client that never
  // connected (Redis went away as the worker started) is not ready either.
  let client: IoredisClient | undefined;
  backend.client.then(
    (resolved) => (client = resolved),
    () => undefined,
  );
  worker.once('closing', () => {
    if (client?.status !== 'ready') return takesAway.cut();
    const connected = client;
    connected.once('close', takesAway.cut);
    worker.once('closed', () => connected.off('close', takesAway.cut));
  });
  const moveToActive = backend.moveToActive.bind(backend);
  backend.moveToActive = (token: string, name?: string) =>
    takesAway.race(() => moveToActive(token, name), (_, reject) => reject(new ConnectionClosedError('the worker is closing and Redis is away')));
}

/**
 * A point after which waits are cut short: `race` runs a promise, settled by
 * `settle` instead once `cut` is called (at once if it was called already).
 */
function cutOff(): {
  readonly cut: () => void;
  race<T>(promise: () => Promise<T>, settle: (resolve: (value: T) => void, reject: (error: Error) => void) => void): Promise<T>;
} {
  let isCut = false;
  const pending = new Set<() => void>();
  return {
    cut: () => {
      isCut = true;
      pending.forEach((settle) => settle());
      pending.clear();
    },
    race: <T>(promise: () => Promise<T>, settle: (resolve: (value: T) => void, reject: (error: Error) => void) => void): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const settleNow = (): void => settle(resolve, reject);
        if (isCut) return settleNow();
        pending.add(settleNow);
        promise()
          .then(resolve, reject)
          .finally(() => pending.delete(settleNow));
      }),
  };
}

/**
 * BullMQ's close ends by quitting the clients it opened, and waits for the
 * replies. A client that waits to reconnect holds QUIT behind the commands it
 * queued meanwhile (the stalled-job check runs every 30 s), so a close during
 * an outage waited as long as the outage. As for the cluster client crawlq
 * owns (see closeWith), QUIT gets QUIT_WAIT_MS; then the worker's own clients
 * are ended, which fails what they still held.
 */
function boundQuit(worker: object, ownsClient: boolean): void {
  const backend = blockingBackendOf(worker, ['close']);
  const close = backend.close.bind(backend);
  const late = Symbol('late');
  backend.close = async (force?: boolean) => {
    if ((await within(close(force), QUIT_WAIT_MS, late)) !== late) return;
    const clients = ownsClient ? [backend.blockingClient, backend.client] : [backend.blockingClient];
    const ending = clients.map(async (client) => {
      const resolved = await client;
      if (resolved !== undefined) await endClient(resolved);
    });
    await within(Promise.all(ending), BLOCKING_DISCONNECT_MS, undefined);
  };
}

/** Ends an ioredis client whatever its state; ioredis' disconnect() alone does not end one between reconnect attempts. */
function endClient(client: IoredisClient): Promise<void> {
  if (client.status === 'end') return Promise.resolve();
  if (client.status === 'reconnecting') return endBetweenAttempts(client);
  return new Promise<void>((resolve) => {
    client.once('end', resolve);
    client.disconnect();
  });
}

/**
 * Ends a client that waits between reconnect attempts. connect() starts an
 * attempt now; disconnect() stops it before it opens a socket (a single
 * node) or once its pool of startup nodes is set up (a cluster sets it up
 * after resolving their names, so not in the same tick). Either way ioredis
 * then ends the client: 'end', and the commands it held fail.
 */
function endBetweenAttempts(client: IoredisClient): Promise<void> {
  return new Promise<void>((resolve) => {
    client.once('end', resolve);
    if (client.isCluster === true) client.once('+node', () => process.nextTick(() => client.disconnect()));
    else client.once('connecting', () => client.disconnect());
    client.connect().catch(() => undefined);
  });
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
