// One contender of the scale bench in a process of its own, so that it shares
// no event loop with the site or the bench: `bare` (the got + cheerio ceiling)
// or `crawlee` (CheerioCrawler). Usage: scale-contender.ts <bare|crawlee>
// <concurrency> <seed...>; prints one JSON line { pages, seconds } timed around
// the crawl itself (process start and imports excluded; the bench times those).
// Crawlee keeps its storage where CRAWLEE_STORAGE_DIR points (the bench sets a
// temp dir).
import { bareLoop } from './bare-loop.js';

const [kind, concurrencyArg, ...seeds] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
if ((kind !== 'bare' && kind !== 'crawlee') || !Number.isInteger(concurrency) || seeds.length === 0) {
  throw new Error('usage: scale-contender.ts <bare|crawlee> <concurrency> <seed...>');
}

async function crawleeRun(): Promise<{ pages: number; seconds: number }> {
  const { CheerioCrawler, log } = await import('crawlee');
  log.setLevel(log.LEVELS.WARNING);
  let pages = 0;
  const crawler = new CheerioCrawler({
    // Fixed at the bench's concurrency, like the other contenders (no ramp-up).
    // Crawlee's pool starts at desiredConcurrency (default 10, minConcurrency
    // notwithstanding) and scales up only while the CPU is not busy: set all three.
    minConcurrency: concurrency,
    maxConcurrency: concurrency,
    autoscaledPoolOptions: { desiredConcurrency: concurrency },
    maxRequestRetries: 0,
    // What a typical Crawlee program does per page: keep a record, follow every link.
    async requestHandler({ request, $, pushData, enqueueLinks }) {
      pages += 1;
      await pushData({ url: request.loadedUrl ?? request.url, title: $('title').text() });
      await enqueueLinks({ strategy: 'all' });
    },
  });
  const started = performance.now();
  await crawler.run(seeds);
  return { pages, seconds: (performance.now() - started) / 1000 };
}

const result = kind === 'bare' ? await bareLoop(seeds, concurrency) : await crawleeRun();
process.stdout.write(`${JSON.stringify(result)}\n`);
