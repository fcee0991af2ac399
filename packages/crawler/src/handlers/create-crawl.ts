import { loadConfig, type CrawlqConfig, type OptionName } from '@crawlq/config';
import { createDeadLetterAdmin } from '@crawlq/dead-letter';
import type { AddResult } from '@crawlq/frontier';
import { type CrawlServices, type CrawlStatus, definitionAuthor, openCrawlServices, pauseGroup, publishCrawlDefinition, readCrawlStatus, resumeGroup, Seeding } from '@crawlq/crawl-control';
import { claimCrawler } from './crawler-identity.js';
import type { Crawler, JsonObject } from './crawler-types.js';
import { inlineCrawler } from './load-crawler.js';

/** What `createCrawl` takes. */
export interface CreateCrawlOptions<Label extends string = string, Item extends object = JsonObject> {
  readonly redisUrl: string;
  /** @default 'crawlq' */
  readonly namespace?: string;
  /** Any crawlq option by its config-file name (`rate`, `maxDepth`, `out`, `allowPrivateNetwork`...), as a config file gives it. */
  readonly options?: Readonly<Partial<Record<OptionName, unknown>>>;
  /** The crawler whose routes handle the pages; unset: the built-in page record. */
  readonly crawler?: Crawler<Label, Item>;
  /** Log lines of the workers run here, and warnings. @default nothing is logged */
  readonly log?: (line: string, level?: 'debug' | 'info' | 'warn' | 'error') => void;
}

/** A worker run inside this process. */
export interface EmbeddedWorker {
  /** Stops taking jobs, lets those in flight finish within `graceMs` (default: `--grace-period`), then closes. */
  stop(graceMs?: number): Promise<void>;
}

/** A crawl in one namespace, steered from the user's own process. */
export interface Crawl {
  readonly config: CrawlqConfig;
  /** Publishes the options as the crawl definition (first call) and enqueues the URLs as seeds (depth 0). */
  enqueue(urls: readonly string[]): Promise<AddResult>;
  status(): Promise<CrawlStatus>;
  /** Pauses a politeness group for the whole fleet for `forMs`. */
  pauseGroup(group: string, forMs: number): Promise<void>;
  /** Lifts a group's pause; returns how many of its jobs were woken. */
  resumeGroup(group: string): Promise<number>;
  /** Runs a worker in this process (as `crawlq worker` does), with this crawl's crawler. */
  runWorker(): Promise<EmbeddedWorker>;
  /** Resolves once nothing is waiting or in flight (checked twice, as `crawlq crawl` does). */
  waitUntilDone(options?: { readonly pollMs?: number; readonly signal?: AbortSignal }): Promise<CrawlStatus>;
  /** Stops the workers run here and closes the connections. */
  close(): Promise<void>;
}

/**
 * Programmatic control of a crawl: crawlq embedded in an existing service.
 * Workers run here and workers started elsewhere (`crawlq worker`) share the
 * crawl; all of them must run the same crawler.
 */
export async function createCrawl<Label extends string, Item extends object>(options: CreateCrawlOptions<Label, Item>): Promise<Crawl> {
  const config = loadConfig({ flags: { ...options.options, redisUrl: options.redisUrl, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) }, env: {} });
  const log = options.log ?? (() => undefined);
  // The worker runs any crawler: its routes' types matter to the user's code only.
  const crawler = options.crawler === undefined ? undefined : inlineCrawler(options.crawler as unknown as Crawler);
  const services: CrawlServices = await openCrawlServices(config, options.redisUrl, { role: 'producer' });
  const deadLetters = createDeadLetterAdmin({ connection: { url: options.redisUrl }, namespace: config.namespace });
  const workers = new Set<EmbeddedWorker>();
  let published: Promise<void> | undefined;
  const publish = () =>
    (published ??= (async () => {
      const { notice } = await publishCrawlDefinition(services, definitionAuthor('createCrawl'));
      if (notice) log(`warning: ${notice}`, 'warn');
      await claimCrawler(services.redis, config.namespace, crawler?.identity);
    })());
  const status = () => readCrawlStatus(services, () => deadLetters.count());
  return {
    config,
    async enqueue(urls) {
      await publish();
      return new Seeding(services, { log: (line) => log(line, 'warn') }).addSeeds(urls);
    },
    status,
    pauseGroup: (group, forMs) => pauseGroup(services, group, forMs),
    resumeGroup: (group) => resumeGroup(services, group),
    async runWorker() {
      await publish();
      // The fetching parts load only when a worker runs here.
      const { startCrawlWorker } = await import('../worker/crawl-worker.js');
      const worker = await startCrawlWorker({ config, redisUrl: options.redisUrl, log, cli: 'crawlq', ...(crawler ? { crawler } : {}) });
      let stopping: Promise<void> | undefined;
      const embedded: EmbeddedWorker = {
        stop: (graceMs = config.gracePeriod) => {
          stopping ??= worker.close(graceMs).finally(() => workers.delete(embedded));
          return stopping;
        },
      };
      workers.add(embedded);
      return embedded;
    },
    async waitUntilDone({ pollMs = 200, signal } = {}) {
      let idle = 0;
      let seen = -1;
      for (;;) {
        signal?.throwIfAborted();
        const now = await status();
        idle = now.done && (idle === 0 || now.seen === seen) ? idle + 1 : now.done ? 1 : 0;
        seen = now.seen;
        if (idle >= 2) return now;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },
    async close() {
      await Promise.all([...workers].map((worker) => worker.stop()));
      await Promise.allSettled([deadLetters.close(), services.close()]);
    },
  };
}
