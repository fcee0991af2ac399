import { QUEUE_NAMES, openCrawlQueue, openQueue, type CrawlQueue } from '@crawlq/queue';
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
 * Opens the crawl, dead-letter and alerts queues of a namespace. The board
 * only shows their jobs, so the two that other packages own stay untyped here.
 * Redis errors reach callers as rejected calls (`openQueue`'s default).
 */
export function openDashboardQueues(connection: QueueConnection, namespace: string): DashboardQueues {
  const crawl = openCrawlQueue(connection, namespace);
  const deadLetter = openQueue(QUEUE_NAMES.deadLetter, { connection, namespace });
  const alerts = openQueue(QUEUE_NAMES.alerts, { connection, namespace });
  return {
    crawl,
    deadLetter,
    alerts,
    async close() {
      await Promise.all([crawl, deadLetter, alerts].map((queue) => queue.close().catch(() => undefined)));
    },
  };
}
