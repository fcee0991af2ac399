import type { CrawlqConfig } from '@crawlq/config';
import { describe, expect, it } from 'vitest';
import { nextSchedule, optimalIntervalMs } from '../../src/revisit/revisit-interval.js';
import { changefreqMs, sitemapHintOf } from '../../src/revisit/sitemap-hints.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const policy = { mode: 'adaptive' as const, minMs: HOUR, maxMs: 30 * DAY };
const now = Date.UTC(2026, 5, 1, 12);
type RevisitConfig = Pick<CrawlqConfig, 'revisit' | 'revisitMin' | 'revisitMax' | 'limitRules'>;
const adaptive: RevisitConfig = { revisit: 'adaptive', revisitMin: HOUR, revisitMax: 30 * DAY, limitRules: [] };
const entry = (fields: { lastmod?: string; changefreq?: 'always' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'yearly' | 'never'; admitted?: boolean }) => ({
  url: 'https://news.test/a',
  group: 'news.test',
  admitted: fields.admitted ?? true,
  ...(fields.lastmod === undefined ? {} : { lastmod: fields.lastmod }),
  ...(fields.changefreq === undefined ? {} : { changefreq: fields.changefreq }),
});

describe('sitemap hints', () => {
  it('reads <changefreq> as an interval: always and never are the bounds once held to them', () => {
    expect(changefreqMs('hourly')).toBe(HOUR);
    expect(changefreqMs('daily')).toBe(DAY);
    expect(changefreqMs('weekly')).toBe(7 * DAY);
    expect(changefreqMs('monthly')).toBe(30 * DAY);
    expect(changefreqMs('yearly')).toBe(365 * DAY);
    // As priors, held within the policy's bounds: always is --revisit-min, never (and yearly here) --revisit-max.
    const first = (priorMs: number | undefined) => nextSchedule({ policy, previousMs: undefined, changed: true, priorMs }).intervalMs;
    expect(first(changefreqMs('always'))).toBe(optimalIntervalMs(policy, 1 / HOUR));
    expect(first(changefreqMs('never'))).toBe(optimalIntervalMs(policy, 1 / (30 * DAY)));
    expect(first(changefreqMs('yearly'))).toBe(first(changefreqMs('never')));
    expect(first(changefreqMs('daily'))).toBe(optimalIntervalMs(policy, 1 / DAY));
    // A page said to change more often starts sooner; without a hint, it starts from sqrt(min * max).
    expect(first(changefreqMs('hourly'))).toBeLessThan(first(changefreqMs('daily')));
    expect(first(changefreqMs('daily'))).toBeLessThan(first(changefreqMs('monthly')));
    expect(first(undefined)).toBe(optimalIntervalMs(policy, 1 / Math.sqrt(HOUR * 30 * DAY)));
    for (const value of ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const) {
      expect(first(changefreqMs(value))).toBeGreaterThanOrEqual(policy.minMs);
      expect(first(changefreqMs(value))).toBeLessThanOrEqual(policy.maxMs);
    }
  });

  it('takes <changefreq> as a prior, not a floor: a page listed as daily that changes at every visit is learned as such', () => {
    let { intervalMs, history } = nextSchedule({ policy, previousMs: undefined, changed: true, priorMs: DAY });
    const start = intervalMs;
    for (let i = 0; i < 10; i += 1) ({ intervalMs, history } = nextSchedule({ policy, previousMs: intervalMs, history, elapsedMs: intervalMs, changed: true, priorMs: DAY }));
    expect(intervalMs).toBeLessThan(start / 2);
    // A Cache-Control hint given with it is still the floor; the changefreq is the prior.
    const both = nextSchedule({ policy, previousMs: undefined, changed: true, priorMs: DAY, hintMs: 2 * HOUR });
    expect(both.intervalMs).toBe(Math.max(2 * HOUR, optimalIntervalMs(policy, 1 / DAY)));
  });

  it('turns an entry into a hint only under --revisit adaptive: a fixed interval or no revisits ignore sitemaps', () => {
    const hint = sitemapHintOf(entry({ lastmod: '2026-05-31T08:00:00Z', changefreq: 'daily' }), adaptive, now);
    expect(hint).toEqual({ url: 'https://news.test/a', minIntervalMs: HOUR, lastModified: Date.UTC(2026, 4, 31, 8), priorMs: DAY });
    const fixed: RevisitConfig = { ...adaptive, revisit: 6 * HOUR };
    expect(sitemapHintOf(entry({ lastmod: '2026-05-31', changefreq: 'daily' }), fixed, now)).toBeUndefined();
    expect(sitemapHintOf(entry({ lastmod: '2026-05-31', changefreq: 'daily' }), { ...adaptive, revisit: 'off' }, now)).toBeUndefined();
    // A limit rule's policy for the URL's group decides, and its minimum goes with the hint.
    const ruled: RevisitConfig = { ...fixed, limitRules: [{ match: 'news.test', revisit: 'adaptive', revisitMin: 10 * 60_000 }] };
    expect(sitemapHintOf(entry({ changefreq: 'hourly' }), ruled, now)).toEqual({ url: 'https://news.test/a', minIntervalMs: 10 * 60_000, priorMs: HOUR });
  });

  it("keeps a changefreq only for a URL just admitted; ignores a malformed lastmod and takes one in the future as now", () => {
    expect(sitemapHintOf(entry({ changefreq: 'daily', admitted: false }), adaptive, now)).toBeUndefined();
    expect(sitemapHintOf(entry({ lastmod: '2026-05-31', changefreq: 'daily', admitted: false }), adaptive, now)).toEqual({
      url: 'https://news.test/a',
      minIntervalMs: HOUR,
      lastModified: Date.UTC(2026, 4, 31),
    });
    for (const lastmod of ['yesterday', '2026-13-01', '31/05/2026', '', 'NaN']) {
      expect(sitemapHintOf(entry({ lastmod, admitted: false }), adaptive, now), lastmod).toBeUndefined();
    }
    expect(sitemapHintOf(entry({ lastmod: '2999-01-01T00:00:00Z', admitted: false }), adaptive, now)?.lastModified).toBe(now);
  });
});
