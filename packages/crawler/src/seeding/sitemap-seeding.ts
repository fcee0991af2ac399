import type { Readable } from 'node:stream';
import { createFetcher } from '@crawlq/fetcher';
import { addEnqueueCounts, emptyEnqueueCounts } from '@crawlq/frontier';
import { readInBatches, readSitemap, type SitemapEntry } from '@crawlq/sitemaps';
import { redactText, redactUrl, tryNormalizeUrl } from '@crawlq/urls';
import { SitemapStatusError } from '../errors.js';
import { fetcherOptionsFrom, type CrawlServices, type SeedingOptions, type SitemapSeedingResult } from '@crawlq/crawl-control';
import { serverFetcherOptions, serverGateOptions } from '../gate/server-wiring.js';
import { GroupGate } from '../gate/group-gate.js';
import { createGatedStream } from '../gate/one-off-fetch.js';
import { openRobotsPolicy } from '../gate/robots-fetch.js';
import { sitemapHintOf } from '../revisit/sitemap-hints.js';

/** sitemaps.org's limit for one sitemap file, uncompressed. */
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;
const BATCH = 1_000;
/** Entries read this long ago are enqueued, even if the batch is not full: a slow sitemap feeds the crawl as it arrives. */
const MAX_BATCH_AGE_MS = 250;

/**
 * Enqueues the pages listed in sitemaps (and sitemap indexes, gzipped or
 * not) as seeds. Documents are streamed from the network into the parser
 *: entries are enqueued while the rest of the document arrives, in
 * batches, and memory stays bounded whatever the document's size; the 50 MiB
 * cap counts decoded bytes (Content-Encoding and .gz alike) as they arrive.
 * A page outside the crawl's scope, judged from the sitemap's own URL, is
 * counted and skipped. Sitemap fetches pass the group gate like any request,
 * and hold their group's slot until the document is read or abandoned.
 *
 * Under `--revisit adaptive` each page's `<lastmod>` and `<changefreq>` are
 * hints for its schedule (see `sitemapHintOf`): a known page changed since
 * its last fetch is due again, a new one starts from its change frequency.
 *
 * One bad sitemap never stops the others or the crawl: a sitemap that
 * cannot be fetched, answers other than 2xx, is over 50 MiB or is not a
 * sitemap is logged as a warning with its URL and reason and counted in
 * `failed`; the entries it yielded before failing are kept.
 */
export async function seedFromSitemaps(
  services: CrawlServices,
  sitemapUrls: readonly string[],
  options: SeedingOptions,
): Promise<SitemapSeedingResult> {
  const { config } = services;
  const { log, signal } = options;
  const aborted = (): boolean => signal?.aborted === true;
  const fetcher = createFetcher({ ...fetcherOptionsFrom(config), ...serverFetcherOptions(services), maxBodyBytes: MAX_SITEMAP_BYTES });
  const open = createGatedStream({ gate: new GroupGate(services.limiter, serverGateOptions(services)), fetcher, groupOf: (url) => services.frontier.groupOf(url) });
  const totals = { listed: 0, outOfScope: 0, failed: 0, dueAgain: 0 };
  const counts = emptyEnqueueCounts();
  const warn = (url: string, error: unknown): void => {
    totals.failed += 1;
    log(`warning: sitemap ${redactUrl(url)} skipped: ${reasonOf(error)}`);
  };
  try {
    for (const sitemapUrl of sitemapUrls) {
      if (aborted()) break;
      const inScope = services.frontier.scopeAround([sitemapUrl]);
      // The bodies this sitemap opened (an index opens its children) and their group slots.
      const bodies: Readable[] = [];
      const slots: Promise<void>[] = [];
      const entries = readSitemap(sitemapUrl, {
        maxDocumentBytes: MAX_SITEMAP_BYTES,
        open: async (url) => {
          const { response, released } = await open(url, { signal });
          bodies.push(response.body);
          slots.push(released);
          // A 404 page is HTML, not a sitemap: say so instead of a parse error.
          if (response.status < 200 || response.status > 299) {
            response.body.destroy();
            throw new SitemapStatusError(url, response.status);
          }
          return response.body;
        },
        onError: warn,
      });
      try {
        await readInBatches(entries, {
          size: BATCH,
          maxAgeMs: MAX_BATCH_AGE_MS,
          onBatch: async (batch) => {
            totals.listed += batch.length;
            const kept = batch.filter((entry) => inScope(entry.loc));
            totals.outOfScope += batch.length - kept.length;
            if (kept.length === 0) return;
            const result = await services.frontier.addSeeds(kept.map((entry) => entry.loc));
            addEnqueueCounts(counts, result);
            totals.dueAgain += await applyHints(services, kept, result.acceptedUrls);
          },
        });
      } catch (error) {
        // Entries read before the failure were enqueued by readInBatches.
        if (!aborted()) warn(sitemapUrl, error);
      } finally {
        // However reading ended, no download stays open and no group slot stays taken.
        for (const body of bodies) body.destroy();
        await Promise.all(slots);
      }
    }
  } finally {
    fetcher.close();
  }
  // Entries the frontier refused (invalid URLs) are not reported: a sitemap has no lines to point at.
  return { sitemaps: sitemapUrls, ...totals, accepted: counts.accepted, duplicate: counts.duplicate, overLimit: counts.overLimit };
}

/**
 * A batch's revisit hints, after its pages were admitted (a new page's prior
 * must belong to a page the frontier took): nothing unless the crawl revisits.
 * Returns how many known pages were made due again.
 */
async function applyHints(services: CrawlServices, entries: readonly SitemapEntry[], acceptedUrls: readonly string[]): Promise<number> {
  const { config, frontier } = services;
  if (config.revisit === 'off' || entries.every((entry) => entry.lastmod === undefined && entry.changefreq === undefined)) return 0;
  const admitted = new Set(acceptedUrls);
  const now = Date.now();
  const hints = entries.flatMap((entry) => {
    if (entry.lastmod === undefined && entry.changefreq === undefined) return [];
    // Keyed as the frontier keyed it (the sitemap reader's normalisation knows nothing of --sort-query).
    const normalised = tryNormalizeUrl(entry.loc, { sortQuery: config.sortQuery });
    if (!normalised.ok) return [];
    const { url } = normalised;
    const hint = sitemapHintOf({ ...entry, url, group: frontier.groupOf(url), admitted: admitted.has(url) }, config, now);
    return hint === undefined ? [] : [hint];
  });
  return frontier.revisits.hint(hints, now);
}

function reasonOf(error: unknown): string {
  return redactText(error instanceof Error ? error.message : String(error));
}

/** The `Sitemap:` lines of the robots.txt files of `origins` (`https://host/`; fetched through the gate, cached for the fleet). */
export async function sitemapsFromRobots(services: CrawlServices, origins: readonly string[]): Promise<string[]> {
  const { config } = services;
  const fetcher = createFetcher({ ...fetcherOptionsFrom(config), ...serverFetcherOptions(services) });
  try {
    const robots = openRobotsPolicy(services, fetcher);
    const found = new Set<string>();
    for (const origin of origins) for (const sitemap of (await robots.check(origin)).sitemaps) found.add(sitemap);
    return [...found];
  } finally {
    fetcher.close();
  }
}
