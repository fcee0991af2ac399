import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DemoSiteConfigError, startDemoSite } from '@crawlq/demo-site';
import type { DemoSite } from '@crawlq/demo-site';
import { until } from './until.js';

async function get(url: string, init?: RequestInit): Promise<{ status: number; retryAfter: string | null }> {
  const response = await fetch(url, init);
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

describe('fault injection and slow pages', () => {
  let site: DemoSite;
  const url = (path: string, host = '127.0.0.2'): string => `http://${host}:${site.port}${path}`;

  beforeAll(async () => {
    site = await startDemoSite({
      hosts: ['127.0.0.2', '127.0.0.3'],
      pagesPerHost: 10,
      linksPerPage: 2,
      slowPages: [{ path: '/p/4', delayMs: 300 }],
      faults: [{ path: '/p/1', times: 2, status: 503, retryAfter: '7' }],
    });
  });
  afterAll(async () => {
    await site.close();
  });
  beforeEach(() => {
    site.resetRecords();
  });

  it('starts with the spec faults: 503 with Retry-After twice, then the page', async () => {
    expect(await get(url('/p/1'))).toEqual({ status: 503, retryAfter: '7' });
    expect(await get(url('/p/1'))).toEqual({ status: 503, retryAfter: '7' });
    expect(await get(url('/p/1'))).toEqual({ status: 200, retryAfter: null });
    expect(await get(url('/p/1'))).toEqual({ status: 200, retryAfter: null });
    // Counted per host: the other host still has its two failures to give.
    expect((await get(url('/p/1', '127.0.0.3'))).status).toBe(503);
    expect(site.requests.map((record) => record.status)).toEqual([503, 503, 200, 200, 503]);
  });

  it('counts `times` per URL for a RegExp rule, honours `host`, and leaves robots.txt alone without a path', async () => {
    site.setFaults([
      { host: '127.0.0.3', path: /^\/p\//g, times: 1, status: 500 },
      { host: '127.0.0.2', status: 429, retryAfter: 'Wed, 21 Oct 2065 07:28:00 GMT' },
    ]);
    expect((await get(url('/p/2', '127.0.0.3'))).status).toBe(500);
    expect((await get(url('/p/3', '127.0.0.3'))).status).toBe(500);
    expect((await get(url('/p/2', '127.0.0.3'))).status).toBe(200);
    expect((await get(url('/', '127.0.0.3'))).status).toBe(200);
    expect(await get(url('/p/5'))).toEqual({ status: 429, retryAfter: 'Wed, 21 Oct 2065 07:28:00 GMT' });
    expect((await get(url('/robots.txt'))).status).toBe(404);
    site.setFaults([{ path: '/robots.txt', status: 503 }]);
    expect((await get(url('/robots.txt'))).status).toBe(503);
    site.setFaults([]);
    expect((await get(url('/p/5'))).status).toBe(200);
  });

  it('restarts the counters when the rules are replaced', async () => {
    site.setFaults([{ path: '/p/2', times: 1, status: 502 }]);
    expect((await get(url('/p/2'))).status).toBe(502);
    expect((await get(url('/p/2'))).status).toBe(200);
    site.setFaults([{ path: '/p/2', times: 1, status: 502 }]);
    expect((await get(url('/p/2'))).status).toBe(502);
    site.setFaults([]);
  });

  it('refuses malformed rules and keeps the old ones', async () => {
    site.setFaults([{ path: '/p/3', status: 504 }]);
    expect(() => site.setFaults([{ status: 99 }])).toThrow(DemoSiteConfigError);
    expect(() => site.setFaults([{ status: 500, host: '10.0.0.1' }])).toThrow(DemoSiteConfigError);
    expect(() => site.setFaults([{ status: 500, times: -1 }])).toThrow(DemoSiteConfigError);
    expect(() => site.setFaults([{ status: 503, retryAfter: '1\r\nX-Evil: 1' }])).toThrow(DemoSiteConfigError);
    expect((await get(url('/p/3'))).status).toBe(504);
    site.setFaults([]);
  });

  it('delays slow pages by delayMs', async () => {
    const started = performance.now();
    expect((await get(url('/p/4'))).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    const [record] = site.requests;
    expect(record!.endedAt - record!.startedAt).toBeGreaterThanOrEqual(295);
  });

  it('delays fault responses by delayMs; status 200 delays the normal page', async () => {
    site.setFaults([
      { path: '/p/5', times: 1, status: 503, delayMs: 200 },
      { path: '/p/6', times: 1, status: 200, delayMs: 200 },
    ]);
    for (const path of ['/p/5', '/p/6']) {
      const started = performance.now();
      await get(url(path));
      expect(performance.now() - started, path).toBeGreaterThanOrEqual(195);
    }
    expect(site.requests.map((record) => record.status)).toEqual([503, 200]);
    site.setFaults([]);
  });

  it('hangs until the client gives up, and records the abandoned request', async () => {
    site.setFaults([{ path: '/p/7', status: 503, hang: true }]);
    // On the site's clock (the same process): the request cannot end before the client gives up.
    const askedAt = performance.timeOrigin + performance.now();
    await expect(get(url('/p/7'), { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    await until(() => site.requests[0]?.aborted === true);
    const [record] = site.requests;
    expect(record).toMatchObject({ host: '127.0.0.2', path: '/p/7', status: 0, aborted: true });
    // Held until the client's 300 ms were up (a timer may fire up to 1 ms early). Not
    // judged from the site's own start stamp: a busy loop stamps the arrival late.
    expect(record!.endedAt - askedAt).toBeGreaterThanOrEqual(299);
    // Other paths are unaffected while one hangs.
    expect((await get(url('/p/8'))).status).toBe(200);
    site.setFaults([]);
  });
});
