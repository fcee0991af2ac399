import type { CrawlqConfig } from '@crawlq/config';
import type { RevisitHint } from '@crawlq/frontier';
import { parseLastmod, type Changefreq, type SitemapEntry } from '@crawlq/sitemaps';
import { revisitPolicyOf } from './revisit-interval.js';

const HOUR_MS = 3_600_000;

/**
 * A sitemap `<changefreq>` as an interval (ms), the prior of a new URL's change
 * rate: `always` is 0 and `never` infinite, so that the policy's bounds (which
 * every prior is held to) make them `--revisit-min` and `--revisit-max`. A
 * month is 30 days, a year 365.
 */
export function changefreqMs(value: Changefreq): number {
  switch (value) {
    case 'always':
      return 0;
    case 'hourly':
      return HOUR_MS;
    case 'daily':
      return 24 * HOUR_MS;
    case 'weekly':
      return 7 * 24 * HOUR_MS;
    case 'monthly':
      return 30 * 24 * HOUR_MS;
    case 'yearly':
      return 365 * 24 * HOUR_MS;
    case 'never':
      return Number.POSITIVE_INFINITY;
  }
}

/**
 * What a sitemap entry says of its (normalised) URL's schedule under the
 * URL's revisit policy, or undefined when it says nothing that policy uses:
 * only `--revisit adaptive` takes hints (a fixed interval is what the user
 * asked for, as with cache headers). `admitted`: the URL was new to the crawl
 * and has just been enqueued, so its `<changefreq>` is kept as the prior of
 * its first fetch; a known URL's own visits say more than it does. A
 * `<lastmod>` that is not a W3C Datetime is ignored; one in the future counts
 * as now (a known URL fetched before it is then due again).
 */
export function sitemapHintOf(
  entry: Pick<SitemapEntry, 'lastmod' | 'changefreq'> & { readonly url: string; readonly group: string; readonly admitted: boolean },
  config: Pick<CrawlqConfig, 'revisit' | 'revisitMin' | 'revisitMax' | 'limitRules'>,
  now: number,
): RevisitHint | undefined {
  const policy = revisitPolicyOf(config, entry.group);
  if (policy.mode !== 'adaptive') return undefined;
  const parsed = entry.lastmod === undefined ? undefined : parseLastmod(entry.lastmod);
  const lastModified = parsed === undefined ? undefined : Math.min(parsed, now);
  const priorMs = entry.admitted && entry.changefreq !== undefined ? changefreqMs(entry.changefreq) : undefined;
  if (lastModified === undefined && priorMs === undefined) return undefined;
  return { url: entry.url, minIntervalMs: policy.minMs, ...(lastModified === undefined ? {} : { lastModified }), ...(priorMs === undefined ? {} : { priorMs }) };
}
