// The library entry of the public `crawlq` package: a hand-picked list of what
// users may import. Everything here is bundled from the workspace packages by
// build.mjs, its types into one dist/index.d.ts; the workspace packages
// themselves are never installed.

// Writing a crawler: `export default defineCrawler({ routes, defaultRoute })`, run with `crawlq crawl --crawler FILE`.
export { defineCrawler, RetryableError, NonRetryableError } from '@crawlq/crawler';
export type {
  Crawler,
  CrawlerDefinition,
  CrawlerHooks,
  CrawlContext,
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
} from '@crawlq/crawler';
// Programmatic control: enqueue, status, pause and resume groups, workers inside the user's own process.
export { createCrawl } from '@crawlq/crawler';
export type { Crawl, CreateCrawlOptions, EmbeddedWorker, CrawlStatus, GroupWait } from '@crawlq/crawler';
// What the built-in crawler writes to the results sink, one record per URL.
export type { PageRecord, SkippedRecord } from '@crawlq/crawler';
