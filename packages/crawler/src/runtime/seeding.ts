import { enqueueLines, type AddResult, type EnqueueStreamOptions, type EnqueueTotals } from '@crawlq/frontier';
import type { CrawlServices } from './crawl-services.js';
import type { SeedingOptions, SitemapSeedingResult } from './sitemap-seeding.js';

/**
 * How URLs enter a crawl from outside, for `crawl` and `enqueue` alike:
 * seeds, then the pages of sitemaps (given, or with `--sitemaps` listed in the
 * robots.txt of every seed's origin), each page judged by the frontier's
 * scope from its sitemap's URL and enqueued as a seed.
 */
export class Seeding {
  readonly #services: CrawlServices;
  readonly #options: SeedingOptions;
  /** The seeds' origins, whatever the seeds' source: `--sitemaps` reads their robots.txt. */
  readonly #origins = new Set<string>();

  constructor(services: CrawlServices, options: SeedingOptions) {
    this.#services = services;
    this.#options = options;
  }

  /** Seeds given together (`crawl`'s arguments): one frontier batch; refused ones are in `rejected`, by index. */
  async addSeeds(urls: readonly string[]): Promise<AddResult> {
    for (const url of urls) this.#noteOrigin(url);
    return this.#services.frontier.addSeeds(urls);
  }

  /** Seeds from lines (arguments, a file, stdin), in batches; `onRejected` gets each refused line's number. */
  async addSeedLines(lines: AsyncIterable<string> | Iterable<string>, options: EnqueueStreamOptions = {}): Promise<EnqueueTotals> {
    const note = (line: string) => this.#noteOrigin(line);
    const noted = async function* (): AsyncGenerator<string> {
      for await (const line of lines) {
        note(line);
        yield line;
      }
    };
    return enqueueLines(this.#services.frontier, noted(), options);
  }

  /**
   * Enqueues the pages of `sitemaps` and, with `--sitemaps`, of the sitemaps
   * the robots.txt of every seed origin added so far lists (see
   * `seedFromSitemaps` for streaming, scope and failures).
   */
  async addSitemaps(sitemaps: readonly string[] = []): Promise<SitemapSeedingResult> {
    // The fetcher and the sitemap parser load only when sitemaps are asked for:
    // a plain `enqueue` starts and stays smaller without them.
    const { seedFromSitemaps, sitemapsFromRobots } = await import('./sitemap-seeding.js');
    const listed = this.#services.config.sitemaps ? await sitemapsFromRobots(this.#services, [...this.#origins]) : [];
    return seedFromSitemaps(this.#services, [...sitemaps, ...listed], this.#options);
  }

  #noteOrigin(input: string): void {
    const url = input.trim();
    if (this.#services.config.sitemaps && URL.canParse(url)) this.#origins.add(new URL(url).origin + '/');
  }
}
