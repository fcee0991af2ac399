// `@crawlq/crawler/fetching`: the parts that fetch pages (got, cheerio,
// robots.txt, the alert and dead-letter workers). A separate entry so that
// commands that only read or write a crawl's Redis state (enqueue, status,
// group, config, the dashboard) load none of it.
export {
  startCrawlWorker,
  runWorkerUntilStopped,
  alertMailConfig,
  CRAWL_FINISHED_MESSAGE,
  REDIS_OUTAGE_MESSAGE,
  type CrawlWorker,
  type CrawlWorkerOptions,
  type WorkerEnd,
  type WorkerTelemetry,
  type LogSeverity,
} from './runtime/crawl-worker.js';
export { runCrawl, type RunCrawlOptions, type CrawlSummary } from './runtime/run-crawl.js';
export { processCrawlJob, type CrawlJobContext } from './process-crawl-job.js';
export { stopOnSignals } from './runtime/stop-signals.js';
export { preloadCrawler } from './handlers/load-crawler.js';
