import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoSiteConfigError, startDemoSite } from '@crawlq/demo-site';
import type { DemoSite } from '@crawlq/demo-site';
import { crawlOverHttp } from './crawl-over-http.js';

const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

describe('reachable() is the ground truth of a real crawl', () => {
  let site: DemoSite;

  beforeAll(async () => {
    site = await startDemoSite({
      hosts: HOSTS,
      pagesPerHost: 30,
      linksPerPage: 3,
      crossHostLinksPerPage: 1,
      brokenLinksPerPage: 1,
      seed: 42,
    });
  });
  afterAll(async () => {
    await site.close();
  });

  const cases = [
    { maxDepth: 0, scope: 'host' },
    { maxDepth: 2, scope: 'host' },
    { maxDepth: 2, scope: 'any' },
    { maxDepth: Infinity, scope: 'host' },
    { maxDepth: Infinity, scope: 'any' },
  ] as const;

  it.each(cases)('matches a BFS over HTTP from one seed (depth $maxDepth, scope $scope)', async ({ maxDepth, scope }) => {
    const seeds = [site.seeds[0]!];
    const crawl = await crawlOverHttp({ seeds, maxDepth, scope });
    expect(sorted(site.reachable({ seeds, maxDepth, scope }))).toEqual(sorted(crawl.fetched));
  });

  it('matches a BFS over HTTP from several seeds, one of them a deep page', async () => {
    const seeds = [site.seeds[1]!, site.urlOf('127.0.0.3', 17), site.urlOf('127.0.0.4', 5)];
    for (const scope of ['host', 'any'] as const) {
      const crawl = await crawlOverHttp({ seeds, maxDepth: 2, scope });
      expect(sorted(site.reachable({ seeds, maxDepth: 2, scope }))).toEqual(sorted(crawl.fetched));
    }
  });

  it('the cases above are not trivial: depth, scope and broken links all change the set', () => {
    const seeds = [site.seeds[0]!];
    const shallowHost = site.reachable({ seeds, maxDepth: 2, scope: 'host' });
    const deepHost = site.reachable({ seeds, maxDepth: Infinity, scope: 'host' });
    const deepAny = site.reachable({ seeds, maxDepth: Infinity, scope: 'any' });
    expect(shallowHost.size).toBeGreaterThan(1);
    expect(shallowHost.size).toBeLessThan(deepHost.size);
    expect(deepHost.size).toBeLessThan(deepAny.size);
    expect([...deepHost].some((url) => url.includes('/missing/'))).toBe(true);
    expect(new Set([...deepAny].map((url) => new URL(url).hostname))).toEqual(new Set(HOSTS));
  });

  it('every page of a host is reachable from its page 0, and the URLs answer as predicted', async () => {
    const seeds = [site.seeds[2]!];
    const reachable = site.reachable({ seeds, maxDepth: Infinity, scope: 'host' });
    for (let page = 0; page < 30; page += 1) expect(reachable).toContain(site.urlOf('127.0.0.4', page));
    const crawl = await crawlOverHttp({ seeds, maxDepth: Infinity, scope: 'host' });
    for (const url of reachable) {
      expect(crawl.statuses.get(url), url).toBe(url.includes('/missing/') ? 404 : 200);
    }
  });

  it('refuses seeds that are not on the site and a negative depth', () => {
    const foreign = `http://127.0.0.9:${site.port}/`;
    expect(() => site.reachable({ seeds: [foreign], maxDepth: 1, scope: 'any' })).toThrow(DemoSiteConfigError);
    expect(() => site.reachable({ seeds: ['http://127.0.0.2:1/'], maxDepth: 1, scope: 'any' })).toThrow(
      DemoSiteConfigError,
    );
    expect(() => site.reachable({ seeds: site.seeds, maxDepth: -1, scope: 'any' })).toThrow(DemoSiteConfigError);
  });
});

function sorted(urls: Iterable<string>): string[] {
  return [...urls].sort();
}
