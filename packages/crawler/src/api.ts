// `@crawlq/crawler/api`: what a crawler module imports (the public `crawlq`
// package's library entry is this). It loads no more than the crawler API
// itself: a worker loads the user's module, which imports this, beside its
// own copy of crawlq (a TypeScript module compiled into the cache imports the
// project's crawlq; through tsx's fallback loader it is a second copy).
// createCrawl loads the rest of crawlq when it is called.
import type { Crawl, CreateCrawlOptions } from './handlers/create-crawl.js';

export { defineCrawler, isCrawler } from './handlers/define-crawler.js';
export { CrawlerDefinitionError, RetryableError, NonRetryableError, type HandlerErrorOptions } from './handlers/user-errors.js';
export type {
  Crawler,
  CrawlerDefinition,
  CrawlerHooks,
  CrawlContext,
  CrawlRender,
  CrawlRequest,
  CrawlResponse,
  CrawlLog,
  RouteHandler,
  EnqueueOptions,
  EnqueueResult,
  BeforeRequestContext,
  FailureContext,
  FailureDecision,
  JsonObject,
} from './handlers/crawler-types.js';
export type { Crawl, CreateCrawlOptions, EmbeddedWorker } from './handlers/create-crawl.js';

/**
 * Programmatic control of a crawl: crawlq embedded in an existing service.
 * Workers run here and workers started elsewhere (`crawlq worker`) share the
 * crawl; all of them must run the same crawler.
 */
export async function createCrawl<Label extends string, Item extends object>(options: CreateCrawlOptions<Label, Item>): Promise<Crawl> {
  const { createCrawl: create } = await import('./handlers/create-crawl.js');
  return create(options);
}
