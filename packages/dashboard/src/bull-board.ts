import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { redactUrl } from '@crawlq/urls';
import type { RequestHandler } from 'express';
import type { DashboardQueues } from './open-queues.js';

/** Where bull-board is mounted. */
export const BULL_BOARD_PATH = '/queues';

/**
 * bull-board's UI loads its scripts and styles from its own static route;
 * this policy keeps it that way (nothing from other origins) and forbids
 * framing. Inline styles are needed by its React components.
 */
export const BULL_BOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function redactValue(value: unknown): unknown {
  return typeof value === 'string' ? redactUrl(value) : value;
}

/** Job data as shown: crawled URLs lose their `user:password@` and secret query values. */
function redactJobData(data: unknown): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return data;
  const record = data as Record<string, unknown>;
  const job = record.job;
  return {
    ...record,
    ...('url' in record ? { url: redactValue(record.url) } : {}),
    ...(typeof job === 'object' && job !== null && 'url' in job ? { job: { ...job, url: redactValue((job as Record<string, unknown>).url) } } : {}),
  };
}

/** bull-board's page links a Google Fonts stylesheet; the UI falls back to system fonts without it. */
const EXTERNAL_FONTS = /<link\b[^>]*\bhref="https:\/\/fonts\.(?:googleapis|gstatic)\.com\/[^"]*"[^>]*>/gi;

/**
 * Removes the Google Fonts link from bull-board's page, so opening the
 * dashboard makes no request to a third party (which would learn the
 * operator's address) and none that hangs on a machine without internet.
 * `BULL_BOARD_CSP` would block it too; this keeps the console quiet.
 */
export function localAssetsOnly(): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET') {
      const send = res.send.bind(res);
      res.send = (body?: unknown) => send(typeof body === 'string' && /^\s*<!doctype html/i.test(body) ? body.replace(EXTERNAL_FONTS, '') : body);
    }
    next();
  };
}

/** Why the dead-letter queue shows as paused, and where to act on it. */
export const DEAD_LETTER_QUEUE_DESCRIPTION =
  'Paused on purpose: no worker consumes dead letters, they wait for review. Retry or purge them in the Dead letters view (/dead-letters).';

/** bull-board, mounted as `router`, showing the crawl queues it was last given. */
export interface BullBoard {
  readonly router: RequestHandler;
  /**
   * Shows these crawl queues (one per shard) in place of the ones before: a
   * crawl's layout can be recorded after the dashboard started, and the
   * queues it was showing are closed then.
   */
  showCrawlShards(crawlShards: readonly DashboardQueues['crawl'][]): void;
}

/**
 * bull-board for the crawl (one per shard), dead-letter and alerts queues. The dead-letter
 * queue is read-only: its entries must change only through the dead-letter
 * view, which keeps its index in step (a bull-board "clean" or "retry" there
 * would not).
 */
export function bullBoard(queues: DashboardQueues, crawlShards: readonly DashboardQueues['crawl'][] = [queues.crawl]): BullBoard {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  // A crawl of several shards has a crawl queue per shard, all named "crawl": a prefix tells them apart.
  const crawlAdapters = (shards: readonly DashboardQueues['crawl'][]): BullMQAdapter[] =>
    shards.length <= 1
      ? [new BullMQAdapter(queues.crawl, { description: 'Pages waiting, delayed or being fetched' })]
      : shards.map(
          (queue, shard) =>
            new BullMQAdapter(queue, { prefix: `shard-${shard}-`, displayName: `crawl, shard ${shard} of ${shards.length}`, description: 'Pages waiting, delayed or being fetched (the groups of this shard)' }),
        );
  const others = [
    // Bull Board badges it "[Paused]"; the description shows beside that badge (queue header, and the info tip on the overview cards).
    new BullMQAdapter(queues.deadLetter, { readOnlyMode: true, description: DEAD_LETTER_QUEUE_DESCRIPTION }),
    new BullMQAdapter(queues.alerts, { description: 'Alert e-mail digests' }),
  ];
  const adaptersFor = (shards: readonly DashboardQueues['crawl'][]): BullMQAdapter[] => {
    const adapters = [...crawlAdapters(shards), ...others];
    for (const adapter of adapters) adapter.setFormatter('data', redactJobData);
    return adapters;
  };
  const board = createBullBoard({
    queues: adaptersFor(crawlShards),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'crawlq queues',
        hideDocsLink: true,
        miscLinks: [{ text: 'Dead letters', url: '/dead-letters' }],
      },
    },
  });
  return {
    router: serverAdapter.getRouter() as RequestHandler,
    showCrawlShards: (shards) => board.replaceQueues(adaptersFor(shards)),
  };
}
