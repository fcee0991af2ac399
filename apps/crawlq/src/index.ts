// The library entry of the public `crawlq` package: a hand-picked list of what
// users may import. Everything here is bundled from the workspace packages by
// build.mjs, its types into one dist/index.d.ts; the workspace packages
// themselves are never installed.

// Writing a crawler: `export default defineCrawler({ routes, defaultRoute })`, run with `crawlq crawl --crawler FILE`.
export { defineCrawler, RetryableError, NonRetryableError } from '@crawlq/crawler/api';
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
  HandlerErrorOptions,
} from '@crawlq/crawler';
// Programmatic control: enqueue, status, pause and resume groups, workers inside the user's own process.
// Loads the rest of crawlq when called: importing `crawlq` in a crawler module stays cheap.
export { createCrawl } from '@crawlq/crawler/api';
export type { Crawl, CreateCrawlOptions, EmbeddedWorker, CrawlStatus, GroupWait, WaitCause } from '@crawlq/crawler';
// What those signatures name: the options (by their config-file names) and the parsed configuration, enqueue's result, the status's counts.
export type { CrawlqConfig, OptionName, AddResult, RejectedUrl, CrawlProgress, CrawlCounts } from '@crawlq/crawler';
// What the built-in crawler writes to the results sink, one record per URL.
export type { PageRecord, SkippedRecord, RenderSummary, RenderedRequest, RequestFate } from '@crawlq/crawler';
