import { Readable } from 'node:stream';
import { createFetcher } from '@crawlq/fetcher';
import { readSitemap } from '@crawlq/sitemaps';
import { createScopeFilter, redactText, redactUrl } from '@crawlq/urls';
import type { CrawlServices } from './crawl-services.js';
import { fetcherOptionsFrom } from './fetcher-options.js';
import { GroupGate } from './group-gate.js';
import { createGatedFetch } from './gated-fetch.js';
import { openRobotsPolicy } from './robots-fetch.js';

/** sitemaps.org's limit for one sitemap file, uncompressed. */
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;
const BATCH = 1_000;

export interface SitemapSeedingResult {
  readonly sitemaps: readonly string[];
  readonly listed: number;
  readonly accepted: number;
  readonly duplicate: number;
  readonly outOfScope: number;
  readonly overLimit: number;
  /** Sitemaps skipped with a warning (unreachable, not 2xx, too big, not XML). */
  readonly failed: number;
}

/**
 * Enqueues the pages listed in sitemaps (and sitemap indexes, gzipped or
 * not) as seeds. Entries are parsed as a stream and enqueued in batches; a
 * page outside the crawl's scope, judged from the sitemap's own URL, is
 * counted and skipped. Sitemap fetches pass the group gate like any request.
 *
 * One bad sitemap never stops the others or the crawl (#10): a sitemap that
 * cannot be fetched, answers other than 2xx, is over 50 MiB or is not a
 * sitemap is logged as a warning with its URL and reason and counted in
 * `failed`; the entries it yielded before failing are kept.
 */
export async function seedFromSitemaps(
  services: CrawlServices,
  sitemapUrls: readonly string[],
  log: (line: string) => void,
): Promise<SitemapSeedingResult> {
  const { config } = services;
  const fetcher = createFetcher({ ...fetcherOptionsFrom(config), maxBodyBytes: MAX_SITEMAP_BYTES });
  const fetch = createGatedFetch({ gate: new GroupGate(services.limiter), fetcher, groupOf: (url) => services.frontier.groupOf(url) });
  const totals = { listed: 0, accepted: 0, duplicate: 0, outOfScope: 0, overLimit: 0, failed: 0 };
  try {
    for (const sitemapUrl of sitemapUrls) {
      const inScope = createScopeFilter({ mode: config.scope, seeds: [sitemapUrl], include: config.include, exclude: config.exclude });
      let batch: string[] = [];
      const flush = async () => {
        const result = await services.frontier.addSeeds(batch);
        totals.accepted += result.accepted;
        totals.duplicate += result.duplicate;
        totals.overLimit += result.overLimit;
        batch = [];
      };
      const entries = readSitemap(sitemapUrl, {
        open: async (url) => {
          const response = await fetch(url);
          // A 404 page is HTML, not a sitemap: say so instead of a parse error.
          if (response.status < 200 || response.status > 299) throw new SitemapStatusError(url, response.status);
          return Readable.from([response.body]);
        },
        onError: (url, error) => {
          totals.failed += 1;
          log(`warning: sitemap ${redactUrl(url)} skipped: ${reasonOf(error)}`);
        },
      });
      try {
        for await (const entry of entries) {
          totals.listed += 1;
          if (!inScope(entry.loc)) {
            totals.outOfScope += 1;
            continue;
          }
          batch.push(entry.loc);
          if (batch.length >= BATCH) await flush();
        }
      } catch (error) {
        totals.failed += 1;
        log(`warning: sitemap ${redactUrl(sitemapUrl)} skipped: ${reasonOf(error)}`);
      } finally {
        await flush(); // Entries read before a failure are kept.
      }
    }
  } finally {
    fetcher.close();
  }
  return { sitemaps: sitemapUrls, ...totals };
}

/** A sitemap URL answered with a status other than 2xx. */
export class SitemapStatusError extends Error {
  override readonly name = 'SitemapStatusError';
  readonly status: number;
  constructor(url: string, status: number) {
    super(`HTTP ${status} from ${redactUrl(url)}`);
    this.status = status;
  }
}

function reasonOf(error: unknown): string {
  return redactText(error instanceof Error ? error.message : String(error));
}

/** The `Sitemap:` lines of the seeds' robots.txt files (fetched through the gate, cached for the fleet). */
export async function sitemapsFromRobots(services: CrawlServices, seeds: readonly string[]): Promise<string[]> {
  const { config } = services;
  const fetcher = createFetcher(fetcherOptionsFrom(config));
  try {
    const robots = openRobotsPolicy(services, fetcher);
    const origins = [...new Set(seeds.flatMap((seed) => (URL.canParse(seed) ? [new URL(seed).origin + '/'] : [])))];
    const found = new Set<string>();
    for (const origin of origins) for (const sitemap of (await robots.check(origin)).sitemaps) found.add(sitemap);
    return [...found];
  } finally {
    fetcher.close();
  }
}
