/** BullMQ queue names. All share the namespace's key prefix (`queuePrefix` in @crawlq/redis). */
export const QUEUE_NAMES = {
  crawl: 'crawl',
  deadLetter: 'dead-letter',
  alerts: 'alerts',
} as const;

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** Job name used for every crawl job (BullMQ requires one; we route by queue). */
export const CRAWL_JOB_NAME = 'fetch';
