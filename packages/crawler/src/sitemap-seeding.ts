import { Readable } from 'node:stream';
import { createFetcher } from '@crawlq/fetcher';
import { readSitemap } from '@crawlq/sitemaps';
import { createScopeFilter } from '@crawlq/urls';
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
}

/**
 * Enqueues the pages listed in sitemaps (and sitemap indexes, gzipped or
 * not) as seeds. Entries are parsed as a stream and enqueued in batches; a
 * page outside the crawl's scope, judged from the sitemap's own URL, is
 * counted and skipped. Sitemap fetches pass the group gate like any request.
 */
export async function seedFromSitemaps(
  services: CrawlServices,
  sitemapUrls: readonly string[],
  log: (line: string) => void,
): Promise<SitemapSeedingResult> {
  const { config } = services;
  const fetcher = createFetcher({ ...fetcherOptionsFrom(config), maxBodyBytes: MAX_SITEMAP_BYTES });
  const fetch = createGatedFetch({ gate: new GroupGate(services.limiter), fetcher, groupOf: (url) => services.frontier.groupOf(url) });
  const totals = { listed: 0, accepted: 0, duplicate: 0, outOfScope: 0, overLimit: 0 };
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
        open: async (url) => Readable.from([(await fetch(url)).body]),
        onError: (url, error) => log(`sitemap ${url} skipped: ${error instanceof Error ? error.message : String(error)}`),
      });
      for await (const entry of entries) {
        totals.listed += 1;
        if (!inScope(entry.loc)) {
          totals.outOfScope += 1;
          continue;
        }
        batch.push(entry.loc);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
    }
  } finally {
    fetcher.close();
  }
  return { sitemaps: sitemapUrls, ...totals };
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
