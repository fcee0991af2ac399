import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoSiteConfigError, startDemoSite } from '@crawlq/demo-site';
import type { DemoSite, RequestRecord } from '@crawlq/demo-site';

// Hosts that answer by their load (SiteSpec.load), judged on the site's own
// request log: what the server applied, whatever the client's timing.

const LOADED = '127.0.0.2';
const SHEDDING = '127.0.0.3';

describe('hosts under load', () => {
  let site: DemoSite;
  const url = (host: string, page: number): string => site.urlOf(host, page);

  beforeAll(async () => {
    site = await startDemoSite({
      hosts: [LOADED, SHEDDING],
      pagesPerHost: 10,
      linksPerPage: 2,
      load: { [LOADED]: { latencyPerInFlightMs: 100 }, [SHEDDING]: { shedAbove: { max: 3, durationMs: 60_000 } } },
    });
  });
  afterAll(async () => {
    await site.close();
  });

  /** Requests of `host` in flight at the server when `request` arrived, itself included. */
  function inFlightAt(requests: readonly RequestRecord[], request: RequestRecord): number {
    return requests.filter((other) => other.startedAt <= request.startedAt && other.endedAt > request.startedAt).length;
  }

  it('answers each request after latencyPerInFlightMs times the requests in flight when it arrived', async () => {
    await Promise.all([1, 2, 3, 4].map(async (page) => (await fetch(url(LOADED, page))).arrayBuffer()));
    const requests = site.requests.filter((request) => request.host === LOADED);
    expect(requests).toHaveLength(4);
    for (const request of requests) {
      expect(request.status).toBe(200);
      const held = request.endedAt - request.startedAt;
      expect(held).toBeGreaterThanOrEqual(100 * inFlightAt(requests, request) - 1);
    }
    // The last to arrive waited for at least the one before it to be in flight.
    expect(Math.max(...requests.map((request) => inFlightAt(requests, request)))).toBeGreaterThanOrEqual(2);
  });

  it('sheds requests above max per window with a 503, counting the refused ones too', async () => {
    const statuses: number[] = [];
    for (let page = 0; page < 5; page += 1) statuses.push((await fetch(url(SHEDDING, page))).status);
    expect(statuses).toEqual([200, 200, 200, 503, 503]);
  });

  it('refuses a load spec for an unknown host or with bad numbers', async () => {
    await expect(startDemoSite({ hosts: [LOADED], pagesPerHost: 1, linksPerPage: 0, load: { '127.0.0.9': {} } })).rejects.toThrow(DemoSiteConfigError);
    await expect(startDemoSite({ hosts: [LOADED], pagesPerHost: 1, linksPerPage: 0, load: { [LOADED]: { shedAbove: { max: 0, durationMs: 1000 } } } })).rejects.toThrow(/shedAbove\.max/);
    await expect(startDemoSite({ hosts: [LOADED], pagesPerHost: 1, linksPerPage: 0, load: { [LOADED]: { latencyPerInFlightMs: -1 } } })).rejects.toThrow(/latencyPerInFlightMs/);
  });
});
