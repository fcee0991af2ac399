import { enqueueLines, type AddResult, type EnqueueCounts, type EnqueueStreamOptions, type EnqueueTotals } from '@crawlq/frontier';
import type { CrawlServices } from './crawl-services.js';

export interface SitemapSeedingResult extends Readonly<Omit<EnqueueCounts, 'rejected'>> {
  readonly sitemaps: readonly string[];
  readonly listed: number;
  readonly outOfScope: number;
  /** Sitemaps skipped with a warning (unreachable, not 2xx, too big, not XML). */
  readonly failed: number;
  /** Known pages (a continuous crawl's) made due again because their `<lastmod>` is newer than their last fetch. */
  readonly dueAgain: number;
}

/**
 * Reads sitemaps and enqueues their pages: `sitemaps` as given, plus (with
 * `--sitemaps`) those the robots.txt of each of `robotsOrigins` lists. It fetches, so it lives
 * with the worker parts (`@crawlq/crawler/sitemaps`'s `readSitemaps`), and
 * {@link Seeding} is handed it.
 */
export type SitemapReader = (services: CrawlServices, request: { readonly sitemaps: readonly string[]; readonly robotsOrigins: readonly string[] }, options: SeedingOptions) => Promise<SitemapSeedingResult>;

/** What seeding is told (see `Seeding`). */
export interface SeedingOptions {
  /** Gets the warning line of each sitemap skipped. */
  readonly log: (line: string) => void;
  /** Stops reading: the open download is cut, entries read so far stay enqueued. */
  readonly signal?: AbortSignal | undefined;
  /** What {@link Seeding.addSitemaps} reads sitemaps with; without it, asking for sitemaps is a programming error. */
  readonly sitemaps?: SitemapReader | undefined;
}

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
   * `seedFromSitemaps` in `@crawlq/crawler` for streaming, scope and failures).
   */
  async addSitemaps(sitemaps: readonly string[] = []): Promise<SitemapSeedingResult> {
    const read = this.#options.sitemaps;
    if (read === undefined) throw new TypeError('Seeding was made without a sitemap reader (its `sitemaps` option)');
    return read(this.#services, { sitemaps, robotsOrigins: [...this.#origins] }, this.#options);
  }

  #noteOrigin(input: string): void {
    const url = input.trim();
    if (this.#services.config.sitemaps && URL.canParse(url)) this.#origins.add(new URL(url).origin + '/');
  }
}
