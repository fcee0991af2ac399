import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DemoSiteConfigError, DemoSiteListenError, startDemoSite } from '@crawlq/demo-site';
import type { SiteSpec } from '@crawlq/demo-site';
import { until } from './until.js';

const SPEC: SiteSpec = { hosts: ['127.0.0.2', '127.0.0.3'], pagesPerHost: 5, linksPerPage: 2 };

function listenNet(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => {
      resolve(server);
    });
  });
}

function closeNet(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('request records', () => {
  it('carry host, path, status, times and user agent, in arrival order', async () => {
    await using site = await startDemoSite(SPEC);
    const before = performance.timeOrigin + performance.now();
    await (await fetch(site.urlOf('127.0.0.3', 2), { headers: { 'user-agent': 'crawlq-test/1' } })).text();
    await (await fetch(`http://127.0.0.2:${site.port}/missing/1?x=1`)).text();
    const after = performance.timeOrigin + performance.now();
    expect(site.requests).toHaveLength(2);
    const [page, missing] = site.requests;
    expect(page).toMatchObject({
      host: '127.0.0.3',
      path: '/p/2',
      url: `http://127.0.0.3:${site.port}/p/2`,
      method: 'GET',
      status: 200,
      aborted: false,
      userAgent: 'crawlq-test/1',
    });
    expect(missing).toMatchObject({ host: '127.0.0.2', path: '/missing/1?x=1', status: 404 });
    expect(page!.startedAt).toBeGreaterThanOrEqual(before);
    expect(page!.endedAt).toBeGreaterThanOrEqual(page!.startedAt);
    expect(missing!.startedAt).toBeGreaterThanOrEqual(page!.endedAt);
    expect(missing!.endedAt).toBeLessThanOrEqual(after);
  });

  it('count per URL (fragment ignored) and in total, and reset', async () => {
    await using site = await startDemoSite(SPEC);
    const url = site.urlOf('127.0.0.2', 3);
    for (let i = 0; i < 3; i += 1) await (await fetch(url)).text();
    await (await fetch(site.seeds[1]!)).text();
    expect(site.requestCount(url)).toBe(3);
    expect(site.requestCount(`${url}#frag`)).toBe(3);
    expect(site.requestCount(site.seeds[1])).toBe(1);
    expect(site.requestCount(site.seeds[0])).toBe(0);
    expect(site.requestCount()).toBe(4);
    const live = site.requests;
    site.resetRecords();
    expect(site.requestCount()).toBe(0);
    expect(site.requestCount(url)).toBe(0);
    expect(live).toHaveLength(0);
    expect(() => site.requestCount('/p/3')).toThrow(DemoSiteConfigError);
  });
});

describe('close()', () => {
  it('returns promptly with a hanging request open, and the client sees the connection drop', async () => {
    const site = await startDemoSite({ ...SPEC, faults: [{ path: '/p/1', status: 503, hang: true }] });
    const hanging = fetch(site.urlOf('127.0.0.2', 1));
    const outcome = hanging.then(
      () => 'answered',
      () => 'dropped',
    );
    await until(() => site.requestCount() === 1);
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      site.close().then(() => 'closed'),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve('still open after 10 s'), 10_000);
      }),
    ]);
    clearTimeout(timer);
    expect(closed).toBe('closed');
    expect(await outcome).toBe('dropped');
    expect(site.requests[0]).toMatchObject({ status: 0, aborted: true });
    // Idempotent, and the servers are really gone.
    await site.close();
    await expect(fetch(site.seeds[0]!)).rejects.toThrow();
  });

  it('also cuts slow responses and idle keep-alive connections', async () => {
    const site = await startDemoSite({ ...SPEC, slowPages: [{ path: '/p/2', delayMs: 60_000 }] });
    await (await fetch(site.seeds[0]!)).text(); // leaves an idle keep-alive connection
    const slow = fetch(site.urlOf('127.0.0.3', 2)).then(
      () => 'answered',
      () => 'dropped',
    );
    await until(() => site.requestCount() === 2);
    await site.close();
    expect(await slow).toBe('dropped');
  });
});

describe('startDemoSite()', () => {
  it('binds an explicit port on every host', async () => {
    const probe = await listenNet(0, '127.0.0.2');
    const address = probe.address();
    await closeNet(probe);
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    await using site = await startDemoSite({ ...SPEC, port });
    expect(site.port).toBe(port);
    for (const seed of site.seeds) expect((await fetch(seed)).status).toBe(200);
  });

  it('fails with a retryable DemoSiteListenError when the port is taken on one host, leaving nothing bound', async () => {
    const blocker = await listenNet(0, '127.0.0.3');
    const address = blocker.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const error: unknown = await startDemoSite({ ...SPEC, port }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DemoSiteListenError);
      expect(error).toMatchObject({ host: '127.0.0.3', port, code: 'EADDRINUSE', retryable: true });
      // The first host was bound before the failure and must have been released.
      await closeNet(await listenNet(port, '127.0.0.2'));
    } finally {
      await closeNet(blocker);
    }
  });

  it('refuses specs that cannot work', async () => {
    const bad: SiteSpec[] = [
      { ...SPEC, hosts: [] },
      { ...SPEC, hosts: ['10.0.0.1'] },
      { ...SPEC, hosts: ['localhost'] },
      { ...SPEC, hosts: ['127.0.0.2', '127.0.0.2'] },
      { ...SPEC, pagesPerHost: 0 },
      { ...SPEC, linksPerPage: 1.5 },
      { ...SPEC, port: 70_000 },
      { ...SPEC, slowPages: [{ path: 'p/1', delayMs: 10 }] },
      { ...SPEC, robotsTxt: { '127.0.0.9': '' } },
      { ...SPEC, faults: [{ status: 700 }] },
    ];
    for (const spec of bad) {
      await expect(startDemoSite(spec), JSON.stringify(spec)).rejects.toBeInstanceOf(DemoSiteConfigError);
    }
  });
});
