// `@crawlq/crawler/sitemaps`: what `Seeding` (in `@crawlq/crawl-control`)
// reads sitemaps with. This module itself loads nothing: the fetcher and the
// sitemap parser load when sitemaps are asked for, so a plain `enqueue`
// starts and stays smaller without them.
import type { SitemapReader } from '@crawlq/crawl-control';

/** Enqueues the pages of `sitemaps`, and, with `--sitemaps`, of those the robots.txt of each of `robotsOrigins` lists (see `seedFromSitemaps`). */
export const readSitemaps: SitemapReader = async (services, { sitemaps, robotsOrigins }, options) => {
  const { seedFromSitemaps, sitemapsFromRobots } = await import('./sitemap-seeding.js');
  const listed = services.config.sitemaps ? await sitemapsFromRobots(services, robotsOrigins) : [];
  return seedFromSitemaps(services, [...sitemaps, ...listed], options);
};
