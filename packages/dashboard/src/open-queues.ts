import { QUEUE_NAMES, openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { queuePrefix } from '@crawlq/redis';
import type { BullMQAdapter } from '@bull-board/api/bullMQAdapter';

/** BullMQ connection options, as `@crawlq/queue` takes them. */
export type QueueConnection = Parameters<typeof openCrawlQueue>[0];

/** A BullMQ `Queue`, as bull-board takes it. */
export type BoardQueue = ConstructorParameters<typeof BullMQAdapter>[0];

/** The three queues of a namespace the dashboard shows. */
export interface DashboardQueues {
  readonly crawl: CrawlQueue;
  readonly deadLetter: BoardQueue;
  readonly alerts: BoardQueue;
  close(): Promise<void>;
}

/**
 * Opens the crawl, dead-letter and alerts queues of a namespace.
 *
 * `@crawlq/queue` only opens the crawl queue, and this package does not
 * depend on bullmq directly, so the other two are made with the crawl queue's
 * own class (bullmq's `Queue`, the same module instance bull-board uses).
 * Replace with `new Queue(...)` once bullmq is a direct dependency.
 */
export function openDashboardQueues(connection: QueueConnection, namespace: string): DashboardQueues {
  const crawl = openCrawlQueue(connection, namespace);
  const QueueClass = crawl.constructor as new (name: string, options: { connection: QueueConnection; prefix: string }) => BoardQueue;
  const open = (name: string): BoardQueue => new QueueClass(name, { connection, prefix: queuePrefix(namespace) });
  const deadLetter = open(QUEUE_NAMES.deadLetter);
  const alerts = open(QUEUE_NAMES.alerts);
  // Redis errors reach callers as rejected calls; the events would only be noise (and unhandled).
  for (const queue of [crawl, deadLetter, alerts]) queue.on('error', () => undefined);
  return {
    crawl,
    deadLetter,
    alerts,
    async close() {
      await Promise.all([crawl, deadLetter, alerts].map((queue) => queue.close().catch(() => undefined)));
    },
  };
}
