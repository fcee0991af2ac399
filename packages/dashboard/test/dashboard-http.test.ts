import { randomUUID } from 'node:crypto';
import { Agent, get } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { DashboardConfigError, DashboardStartError, isLoopbackHost, startDashboard, type Dashboard, type DashboardOptions } from '../src/index.js';
import { openFleetAdmin, type FleetAdmin } from '@crawlq/crawl-control';
import { Frontier } from '@crawlq/frontier';
import { CRAWL_JOB_NAME, openCrawlQueue } from '@crawlq/queue';
import { shardNamespaces, shardOfGroup, stateKeyPrefix } from '@crawlq/redis';
import { api, csrfTokenOf, openNamespace, request, seedDeadLetter, type Namespace } from './helpers.js';

/** The test Redis requires this password, so the dashboard must use it and must never show it. */
const REDIS_PASSWORD = 'redis-pw-7f3a9c1e';
const JOB_POLICY = { attempts: 3, backoffMs: 1000 };

let redis: TestRedis;
let redisUrl: string;
/** Connected before the password is required, so it stays authenticated. */
let admin: ReturnType<TestRedis['client']>;
const closers: (() => Promise<unknown>)[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  admin = redis.client();
  await admin.config('SET', 'requirepass', REDIS_PASSWORD);
  redisUrl = `redis://:${REDIS_PASSWORD}@127.0.0.1:${redis.port}`;
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await redis.stop();
});

/** A fresh namespace with three dead letters, and a dashboard on it. */
async function setup(options: Partial<DashboardOptions> = {}): Promise<{ space: Namespace; dashboard: Dashboard }> {
  const space = openNamespace(redisUrl, `t${randomUUID().slice(0, 8)}`);
  closers.push(() => space.close());
  await seedDeadLetter(space, { id: 'fp-a', url: 'https://example.com/a', group: 'example.com' });
  await seedDeadLetter(space, {
    id: 'fp-b',
    url: 'https://example.com/b',
    group: 'example.com',
    error: Object.assign(new Error('Timeout awaiting response for 10000ms'), { code: 'ETIMEDOUT' }),
  });
  await seedDeadLetter(space, { id: 'fp-c', url: 'https://other.org/c', group: 'other.org' });
  const dashboard = await startDashboard({
    redisUrl,
    namespace: space.namespace,
    port: 0,
    jobPolicy: JOB_POLICY,
    log: (line) => logLines.push(line),
    ...options,
  });
  closers.push(() => dashboard.close());
  return { space, dashboard };
}

function ids(json: unknown): string[] {
  return (json as { entries: { id: string }[] }).entries.map((entry) => entry.id);
}

describe('starting', () => {
  it('refuses a non-loopback address without auth, before touching Redis or a port', async () => {
    for (const host of ['0.0.0.0', '::', '192.0.2.10', 'dashboard.example.com', '127.0.0.1.nip.io']) {
      const started = startDashboard({ redisUrl: 'redis://127.0.0.1:1', namespace: 'x', host, port: 0, jobPolicy: JOB_POLICY });
      await expect(started, host).rejects.toThrow(DashboardConfigError);
      await expect(started).rejects.toMatchObject({ option: 'host', message: expect.stringContaining('without auth') });
    }
  });

  it('refuses empty credentials', async () => {
    await expect(
      startDashboard({ redisUrl, namespace: 'x', port: 0, auth: { user: 'ops', password: '' }, jobPolicy: JOB_POLICY }),
    ).rejects.toMatchObject({ name: 'DashboardConfigError', option: 'auth' });
  });

  it('tells loopback literals from everything else', () => {
    for (const host of ['127.0.0.1', '127.3.2.1', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', 'example.com', '127.0.0.1.nip.io', 'evil.localhost', '']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('closes its server, open keep-alive connections and Redis connections', async () => {
    const clientCount = async () => String(await admin.client('LIST')).trim().split('\n').length;
    const before = await clientCount();
    const { dashboard } = await setup();
    const agent = new Agent({ keepAlive: true });
    const page = await new Promise<number>((resolve, reject) => {
      get(`${dashboard.url}/queues/api/queues`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      }).on('error', reject);
    });
    expect(page).toBe(200);
    expect(await clientCount()).toBeGreaterThan(before);
    await dashboard.close();
    await dashboard.close(); // Idempotent.
    await expect(request(`${dashboard.url}/dead-letters`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // Only the test's own connections (crawl queue and dead letters of `setup`) are left.
    await closers.shift()?.();
    await waitFor(async () => (await clientCount()) === before, { what: 'Redis connections to close', timeoutMs: 15_000, intervalMs: 25 });
    agent.destroy();
  });

  it('fails with a clear error when Redis does not answer, without the password', async () => {
    const port = await freePort();
    const started = startDashboard({ redisUrl: `redis://:${REDIS_PASSWORD}@127.0.0.1:${port}`, namespace: 'x', port: 0, jobPolicy: JOB_POLICY });
    await expect(started).rejects.toThrow(DashboardStartError);
    await expect(started).rejects.toThrow(/cannot reach Redis/);
    await expect(started).rejects.not.toThrow(REDIS_PASSWORD);
  });
});

describe('basic auth', () => {
  it('guards every route: pages, API and bull-board', async () => {
    const { space, dashboard } = await setup({ auth: { user: 'ops', password: 'correct horse' } });
    const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });
    for (const path of ['/', '/dead-letters', '/dead-letters/fp-a', '/api/stats', '/api/dead-letters', '/queues', '/queues/api/queues', '/nowhere']) {
      const anonymous = await request(`${dashboard.url}${path}`);
      expect(anonymous.status, path).toBe(401);
      expect(anonymous.headers['www-authenticate'], path).toMatch(/^Basic realm=/);
      expect((await request(`${dashboard.url}${path}`, { headers: basic('ops:wrong horse') })).status, path).toBe(401);
      expect((await request(`${dashboard.url}${path}`, { headers: basic('root:correct horse') })).status, path).toBe(401);
      expect((await request(`${dashboard.url}${path}`, { headers: basic('ops:correct horse') })).status, path).toBe(
        path === '/nowhere' ? 404 : path === '/' ? 302 : 200,
      );
    }
    const purge = await request(`${dashboard.url}/api/dead-letters/fp-a/purge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(purge.status).toBe(401);
    expect(await space.dlq.count()).toBe(3);
    const allowed = await api(dashboard.url, '/api/dead-letters/fp-a/purge', { method: 'POST', headers: basic('ops:correct horse') });
    expect(allowed).toEqual({ status: 200, json: { purged: 1 } });
  });
});

describe('JSON API', () => {
  it('lists with filters, shows one entry and counts', async () => {
    const { dashboard } = await setup();
    expect(ids((await api(dashboard.url, '/api/dead-letters')).json).sort()).toEqual(['fp-a', 'fp-b', 'fp-c']);
    expect(ids((await api(dashboard.url, '/api/dead-letters?group=example.com')).json).sort()).toEqual(['fp-a', 'fp-b']);
    expect(ids((await api(dashboard.url, '/api/dead-letters?reason=http-503')).json).sort()).toEqual(['fp-a', 'fp-c']);
    expect(ids((await api(dashboard.url, '/api/dead-letters?group=example.com&reason=timeout')).json)).toEqual(['fp-b']);
    expect(ids((await api(dashboard.url, '/api/dead-letters?limit=2')).json)).toHaveLength(2);
    expect(await api(dashboard.url, '/api/dead-letters?limit=0')).toMatchObject({ status: 400, json: { error: expect.stringContaining('limit') } });
    expect(await api(dashboard.url, '/api/dead-letters?group=a&group=b')).toMatchObject({ status: 400, json: { error: expect.stringContaining('group') } });

    const shown = await api(dashboard.url, '/api/dead-letters/fp-b');
    expect(shown).toMatchObject({
      status: 200,
      json: { id: 'fp-b', url: 'https://example.com/b', group: 'example.com', reason: 'timeout', status: null, job: { url: 'https://example.com/b' } },
    });
    expect(await api(dashboard.url, '/api/dead-letters/fp-nope')).toMatchObject({ status: 404, json: { error: expect.stringContaining('fp-nope') } });

    expect(await api(dashboard.url, '/api/stats')).toEqual({
      status: 200,
      json: {
        total: 3,
        byGroup: { 'example.com': 2, 'other.org': 1 },
        byReason: { 'http-503': 2, timeout: 1 },
        crawl: { backlog: 0, waiting: 0, delayed: 0, delayedDue: 0, active: 0, failed: 0, seen: 0 },
      },
    });
  });

  it('counts URLs still in the backlog in /api/stats, so an API reader never sees an idle crawl that is not', async () => {
    const { space, dashboard } = await setup();
    const backlog = new Frontier({
      redis: admin,
      queue: space.crawl,
      namespace: space.namespace,
      // Nothing is released here: only admission runs.
      pacer: { runPaced: () => Promise.reject(new Error('no release in this test')) },
      settings: { scope: 'host', include: [], exclude: [], maxDepth: 2, groupBy: 'host', sortQuery: false, jobPolicy: JOB_POLICY },
    });
    expect(await backlog.addSeeds(['https://example.com/', 'https://example.com/next', 'https://other.org/'])).toMatchObject({ accepted: 3 });
    const { json } = await api(dashboard.url, '/api/stats');
    expect(json).toMatchObject({ crawl: { backlog: 3, waiting: 0, active: 0 } });
  });

  it('follows a crawl of 3 shards that began after it started: /api/stats sums the shards, bull-board shows a crawl queue per shard, a group is paused in its shard, a dead letter goes back into its group\'s shard', async () => {
    const { space, dashboard } = await setup();
    const shards = shardNamespaces(space.namespace, 3);
    const shardQueues = shards.map((shard) => openCrawlQueue({ url: redisUrl }, shard));
    closers.push(() => Promise.all(shardQueues.map((queue) => queue.close())).then(() => undefined));
    const noRelease = { runPaced: () => Promise.reject(new Error('no release in this test')) };
    const frontier = new Frontier({
      redis: admin,
      queue: space.crawl,
      namespace: space.namespace,
      pacer: noRelease,
      shards: shards.map((shard, i) => ({ namespace: shard, queue: shardQueues[i]!, pacer: noRelease })),
      settings: { scope: 'any', include: [], exclude: [], maxDepth: 2, groupBy: 'host', sortQuery: false, jobPolicy: JOB_POLICY },
    });
    const seeds = ['https://example.com/', 'https://example.com/next', 'https://other.org/', 'https://third.net/', 'https://fourth.io/'];
    expect(await frontier.addSeeds(seeds)).toMatchObject({ accepted: 5 });
    expect((await api(dashboard.url, '/api/stats')).json).toMatchObject({ crawl: { backlog: 5, seen: 5 } });

    // other.org's shard holds its dead letter's retried job; no other queue does.
    const shard = shardOfGroup('other.org', 3);
    expect(await api(dashboard.url, '/api/dead-letters/fp-c/retry', { method: 'POST' })).toEqual({ status: 200, json: { retried: 1 } });
    expect((await shardQueues[shard]!.getJob('fp-c'))?.data.url).toBe('https://other.org/c');
    for (const [i, queue] of shardQueues.entries()) if (i !== shard) expect(await queue.getJob('fp-c')).toBeUndefined();
    expect(await space.crawl.getJob('fp-c')).toBeUndefined();
    // bull-board, started before the crawl had shards, now shows one crawl queue per shard, the job in its shard's.
    const board = (await api(dashboard.url, '/queues/api/queues')).json as { queues: { name: string; displayName?: string; counts: Record<string, number> }[] };
    const crawlQueues = board.queues.filter((queue) => queue.displayName?.startsWith('crawl, shard '));
    expect(crawlQueues.map((queue) => queue.displayName).sort()).toEqual(['crawl, shard 0 of 3', 'crawl, shard 1 of 3', 'crawl, shard 2 of 3']);
    const counted = crawlQueues.map((queue) => Object.values(queue.counts).reduce((sum, n) => sum + n, 0));
    expect(counted).toEqual(crawlQueues.map((queue) => (queue.displayName === `crawl, shard ${shard} of 3` ? 1 : 0)));
    expect(board.queues.map((queue) => queue.name)).toEqual(expect.arrayContaining(['dead-letter', 'alerts']));

    // A pause from the dashboard lands in the group's shard, where its jobs' gate reads it.
    expect((await api(dashboard.url, '/api/groups/other.org/pause', { method: 'POST', body: { forMs: 60_000 } })).status).toBe(200);
    const paused = await admin.hget(`${stateKeyPrefix(shards[shard]!)}:gate:group:other.org`, 'pausedUntil');
    expect(Number(paused)).toBeGreaterThan(Date.now());
    expect(await admin.exists(`${stateKeyPrefix(space.namespace)}:gate:group:other.org`)).toBe(0);
  });

  it('retries one entry: the job is back in the crawl queue with the policy, and the entry is gone', async () => {
    const { space, dashboard } = await setup();
    expect(await api(dashboard.url, '/api/dead-letters/fp-a/retry', { method: 'POST' })).toEqual({ status: 200, json: { retried: 1 } });
    const job = await space.crawl.getJob('fp-a');
    expect(job?.data).toEqual({ url: 'https://example.com/a', depth: 1, group: 'example.com' });
    expect(job?.opts.attempts).toBe(JOB_POLICY.attempts);
    expect(await job?.getState()).toBe('waiting');
    expect((await api(dashboard.url, '/api/dead-letters/fp-a')).status).toBe(404);
    expect(await space.dlq.count()).toBe(2);
    // Again: nothing left to retry, and still one job.
    expect((await api(dashboard.url, '/api/dead-letters/fp-a/retry', { method: 'POST' })).status).toBe(404);
    expect(await space.crawl.count()).toBe(1);
    expect(logLines).toContain('dashboard: retried dead letter fp-a');
  });

  it('retries and purges in bulk by group, by reason, or all, but never on an empty selection', async () => {
    const { space, dashboard } = await setup();
    expect(await api(dashboard.url, '/api/dead-letters/retry', { method: 'POST', body: {} })).toMatchObject({ status: 400 });
    expect(await api(dashboard.url, '/api/dead-letters/purge', { method: 'POST', body: { group: '' } })).toMatchObject({ status: 400 });
    expect(await space.dlq.count()).toBe(3);

    expect((await api(dashboard.url, '/api/dead-letters/retry', { method: 'POST', body: { reason: 'timeout' } })).json).toEqual({ retried: 1 });
    expect(await space.crawl.getJob('fp-b')).toBeDefined();
    expect((await api(dashboard.url, '/api/dead-letters/retry', { method: 'POST', body: { group: 'other.org' } })).json).toEqual({ retried: 1 });
    expect(await space.crawl.getJob('fp-c')).toBeDefined();
    expect(ids((await api(dashboard.url, '/api/dead-letters')).json)).toEqual(['fp-a']);

    expect((await api(dashboard.url, '/api/dead-letters/fp-a/purge', { method: 'POST' })).json).toEqual({ purged: 1 });
    expect(await space.crawl.getJob('fp-a')).toBeUndefined();
    expect((await api(dashboard.url, '/api/dead-letters/fp-a/purge', { method: 'POST' })).status).toBe(404);

    await seedDeadLetter(space, { id: 'fp-d', url: 'https://example.com/d', group: 'example.com' });
    await seedDeadLetter(space, { id: 'fp-e', url: 'https://other.org/e', group: 'other.org' });
    expect((await api(dashboard.url, '/api/dead-letters/purge', { method: 'POST', body: { all: true } })).json).toEqual({ purged: 2 });
    expect(await space.dlq.count()).toBe(0);
  });
});

describe('cross-site requests', () => {
  it('refuses API writes from other origins, and simple (non-JSON) POSTs, changing nothing', async () => {
    const { space, dashboard } = await setup();
    const { port } = new URL(dashboard.url);
    const attempts: Record<string, string>[] = [
      { 'content-type': 'application/json', origin: 'http://evil.example' },
      { 'content-type': 'application/json', origin: 'null' },
      { 'content-type': 'application/json', origin: `http://localhost:${Number(port) + 1}` },
      { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      { 'content-type': 'application/json', 'sec-fetch-site': 'same-site', origin: dashboard.url },
    ];
    for (const headers of attempts) {
      const response = await request(`${dashboard.url}/api/dead-letters/fp-a/purge`, { method: 'POST', headers, body: '{}' });
      expect(response.status, JSON.stringify(headers)).toBe(403);
    }
    // What a plain <form> of another site can send without a CORS preflight:
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const response = await request(`${dashboard.url}/api/dead-letters/retry`, { method: 'POST', headers: { 'content-type': type }, body: 'all=1' });
      expect(response.status, type).toBe(415);
    }
    expect(await space.dlq.count()).toBe(3);
    expect(await space.crawl.count()).toBe(0);
    // The same request from our own origin works.
    const own = await request(`${dashboard.url}/api/dead-letters/fp-a/purge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard.url, 'sec-fetch-site': 'same-origin' },
      body: '{}',
    });
    expect(own.status).toBe(200);
    expect(await space.dlq.count()).toBe(2);
  });

  it('refuses form posts from other origins or without the page token', async () => {
    const { space, dashboard } = await setup();
    const token = csrfTokenOf((await request(`${dashboard.url}/dead-letters`)).body);
    const form = (fields: Record<string, string>, headers: Record<string, string>) =>
      request(`${dashboard.url}/dead-letters/fp-a/retry`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });
    expect((await form({ _csrf: token }, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await form({ _csrf: token }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await form({}, { origin: dashboard.url })).status).toBe(403);
    expect((await form({ _csrf: `${token}x` }, { origin: dashboard.url })).status).toBe(403);
    expect((await request(`${dashboard.url}/dead-letters/purge`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'all=1' })).status).toBe(403);
    expect(await space.dlq.count()).toBe(3);
    expect(await space.crawl.count()).toBe(0);
  });

  it('refuses bull-board writes from other origins', async () => {
    const { space, dashboard } = await setup();
    const pause = await request(`${dashboard.url}/queues/api/queues/crawl/pause`, { method: 'PUT', headers: { origin: 'http://evil.example' } });
    expect(pause.status).toBe(403);
    expect(await space.crawl.isPaused()).toBe(false);
    const own = await request(`${dashboard.url}/queues/api/queues/crawl/pause`, { method: 'PUT', headers: { origin: dashboard.url } });
    expect(own.status).toBe(200);
    expect(await space.crawl.isPaused()).toBe(true);
  });

  it('answers only to loopback Host names without auth (DNS rebinding)', async () => {
    const { dashboard } = await setup();
    const { port } = new URL(dashboard.url);
    expect((await request(`${dashboard.url}/api/stats`, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
    expect((await request(`${dashboard.url}/dead-letters`, { headers: { host: `localhost:${port}` } })).status).toBe(200);
  });
});

describe('pages', () => {
  it('retries from a form, redirects back to the filter and shows a one-time message', async () => {
    const { space, dashboard } = await setup();
    const page = await request(`${dashboard.url}/dead-letters?group=example.com`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('https://example.com/a');
    expect(page.body).not.toContain('https://other.org/c');
    const response = await request(`${dashboard.url}/dead-letters/fp-a/retry`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: dashboard.url },
      body: new URLSearchParams({ _csrf: csrfTokenOf(page.body), group: 'example.com' }).toString(),
    });
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/dead-letters?group=example.com');
    const cookie = String(response.headers['set-cookie']).split(';')[0] ?? '';
    expect(await space.crawl.getJob('fp-a')).toBeDefined();

    const after = await request(`${dashboard.url}${String(response.headers.location)}`, { headers: { cookie } });
    expect(after.body).toContain('Retried https://example.com/a: it is back in the crawl queue.');
    expect(after.body).not.toContain('data-id="fp-a"');
    expect(after.body).toContain('data-id="fp-b"');
    expect((await request(`${dashboard.url}/dlq`)).headers.location).toBe('/dead-letters');
    const again = await request(`${dashboard.url}/dead-letters`);
    expect(again.body).not.toContain('Retried https://example.com/a');
  });

  it('escapes hostile input and sends a strict content security policy', async () => {
    const { space, dashboard } = await setup();
    await seedDeadLetter(space, {
      id: 'fp-x',
      url: 'https://evil.example/"><script>alert(1)</script>',
      group: '<img src=x onerror=alert(2)>',
      error: new Error('<script>alert("message")</script> \' " `'),
    });
    for (const path of ['/dead-letters', '/dead-letters/fp-x', `/dead-letters?group=${encodeURIComponent('<img src=x onerror=alert(2)>')}`]) {
      const page = await request(`${dashboard.url}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.body, path).not.toMatch(/<script>alert|<img src=x/);
      expect(page.body, path).toContain('&lt;img src=x onerror=alert(2)&gt;');
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toMatch(/script-src 'nonce-[^']+'/);
      expect(csp).toContain("frame-ancestors 'none'");
    }
    expect((await request(`${dashboard.url}/dead-letters/fp-x`)).body).toContain('&lt;script&gt;alert(&quot;message&quot;)&lt;/script&gt;');
  });

  it('never shows the Redis password or a crawled URL’s credentials', async () => {
    const { space, dashboard } = await setup();
    await seedDeadLetter(space, { id: 'fp-s', url: 'https://bob:hunter2@example.com/s?token=tok-secret-1&x=1', group: 'example.com' });
    const paths = [
      '/dead-letters',
      '/dead-letters/fp-s',
      '/api/dead-letters',
      '/api/dead-letters/fp-s',
      '/api/stats',
      '/queues',
      '/queues/api/queues',
      '/queues/api/queues?activeQueue=dead-letter&status=waiting&page=1',
      '/queues/api/queues/dead-letter/fp-s',
      '/queues/api/redis/stats',
    ];
    for (const path of paths) {
      const response = await request(`${dashboard.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.body, path).not.toContain(REDIS_PASSWORD);
      expect(response.body, path).not.toContain('hunter2');
      expect(response.body, path).not.toContain('tok-secret-1');
    }
    expect((await request(`${dashboard.url}/queues/api/queues?activeQueue=dead-letter&status=waiting&page=1`)).body).toContain('example.com/s');
    expect(logLines.join('\n')).not.toContain(REDIS_PASSWORD);
  });
});

/** The namespace's group limiter and queue as a worker fleet shares them, opened by the test. */
async function fleet(space: Namespace): Promise<FleetAdmin> {
  const opened = await openFleetAdmin(redisUrl, space.namespace);
  closers.push(() => opened.close());
  return opened;
}

/** A form POST from a page of the dashboard, with its token. */
function formPost(dashboard: Dashboard, path: string, fields: Record<string, string>) {
  return request(`${dashboard.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: dashboard.url },
    body: new URLSearchParams(fields).toString(),
  });
}

describe('crawl overview', () => {
  it('marks a group that adaptive pacing slowed down, with why', async () => {
    const { space, dashboard } = await setup();
    const admin = await fleet(space);
    await admin.limiter.setPolicy({ defaults: { rate: { max: 4, durationMs: 1_000 }, concurrency: 4 }, adaptive: { enabled: true, risePerSecond: 0.000_1 } });
    const admission = await admin.limiter.acquire({ group: 'struggling.example', leaseId: 'lease-1' });
    if (!admission.admitted) throw new Error('not admitted');
    await admin.limiter.release(admission.lease, { status: 503, sent: true });
    await admin.limiter.acquire({ group: 'fine.example', leaseId: 'lease-2' });
    const page = await request(`${dashboard.url}/overview`);
    const row = (group: string) => page.body.split('<tr data-group="').find((part) => part.startsWith(`${group}"`))?.split('</tr>')[0] ?? '';
    expect(row('struggling.example')).toMatch(/<span class="tag" title="HTTP 503">slowed to 0\.5<\/span>/);
    expect(row('fine.example')).not.toContain('slowed');
  });

  it('is the landing page: counts, statuses and each group with its limits, in-flight and pause, all escaped', async () => {
    const { space, dashboard } = await setup();
    const admin = await fleet(space);
    const hostile = '<img src=x onerror=alert(1)>.example';
    await admin.limiter.acquire({ group: 'shop.example.com', leaseId: 'lease-1' });
    await admin.limiter.acquire({ group: hostile, leaseId: 'lease-2' });
    await admin.limiter.pause(hostile, 60_000, 'Retry-After on 429 <b>');
    await space.crawl.add(CRAWL_JOB_NAME, { url: 'https://shop.example.com/next', depth: 1, group: 'shop.example.com' });

    expect((await request(`${dashboard.url}/`)).headers.location).toBe('/overview');
    const page = await request(`${dashboard.url}/overview`);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(page.body).toMatch(/data-testid="waiting">1</);
    expect(page.body).toMatch(/data-testid="dead-lettered">3</);
    expect(page.body).toContain('data-group="shop.example.com"');
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;.example');
    expect(page.body).toContain('Retry-After on 429 &lt;b&gt;');
    expect(page.body).not.toContain('<img src=x');
    expect(page.body).not.toContain('<b>)');
    // The hostile group is paused (a Resume button), the other one can be paused.
    expect(page.body).toContain(`action="/groups/${encodeURIComponent(hostile)}/resume"`);
    expect(page.body).toContain('action="/groups/shop.example.com/pause"');
    // What the page's script fetches to refresh: the same figures, escaped, without the page around them.
    const fragment = await request(`${dashboard.url}/overview/fragment`);
    expect(fragment.body.startsWith('<div id="overview"')).toBe(true);
    expect(fragment.body).toContain('&lt;img src=x onerror=alert(1)&gt;.example');
    expect(fragment.body).not.toContain('<img src=x');
    expect(fragment.body).not.toContain('<style');

    const { json } = await api(dashboard.url, '/api/overview');
    const overview = json as { status: { waiting: number; deadLettered: number; done: boolean }; groups: { groups: { group: string; inFlight: number; waitingFor: string | null }[] } };
    expect(overview.status).toMatchObject({ waiting: 1, deadLettered: 3, done: false });
    expect(overview.groups.groups.map((group) => [group.group, group.inFlight])).toEqual([
      [hostile, 1],
      ['shop.example.com', 1],
    ]);
    expect(overview.groups.groups[0]?.waitingFor).toMatch(/^pause \(Retry-After on 429 <b>\), \d+ s left$/);
  });

  it('pauses and resumes a group for the whole fleet from its form, only with the page token', async () => {
    const { space, dashboard } = await setup();
    const admin = await fleet(space);
    await admin.limiter.acquire({ group: '127.0.0.1:18503', leaseId: 'lease-1' });
    const token = csrfTokenOf((await request(`${dashboard.url}/overview`)).body);

    expect((await formPost(dashboard, '/groups/127.0.0.1%3A18503/pause', { for: '600000' })).status).toBe(403);
    expect((await admin.limiter.status('127.0.0.1:18503')).pausedUntil).toBeNull();
    expect((await formPost(dashboard, '/groups/127.0.0.1%3A18503/pause', { _csrf: token, for: '12345' })).status).toBe(400);

    const paused = await formPost(dashboard, '/groups/127.0.0.1%3A18503/pause', { _csrf: token, for: '600000' });
    expect(paused.status).toBe(303);
    expect(paused.headers.location).toBe('/overview');
    const status = await admin.limiter.status('127.0.0.1:18503');
    expect(status.pausedUntil).toBeGreaterThan(Date.now() + 500_000);
    expect(status.pauseReason).toBe('admin');
    const after = await request(`${dashboard.url}/overview`, { headers: { cookie: String(paused.headers['set-cookie']).split(';')[0] ?? '' } });
    expect(after.body).toContain('Paused 127.0.0.1:18503 for 10 min on every worker.');
    expect(after.body).toMatch(/admin pause, \d+ s left/);

    const resumed = await formPost(dashboard, '/groups/127.0.0.1%3A18503/resume', { _csrf: token });
    expect(resumed.status).toBe(303);
    expect((await admin.limiter.status('127.0.0.1:18503')).pausedUntil).toBeNull();
    expect(logLines).toContain('dashboard: paused group 127.0.0.1:18503 for 600 s');
    expect(logLines).toContain('dashboard: resumed group 127.0.0.1:18503 (0 deferred jobs woken)');

    // The JSON API does the same, behind its JSON-only guard.
    expect((await request(`${dashboard.url}/api/groups/a.example/pause`, { method: 'POST' })).status).toBe(415);
    expect(await api(dashboard.url, '/api/groups/a.example/pause', { method: 'POST', body: { forMs: 30_000 } })).toEqual({
      status: 200,
      json: { paused: 'a.example', forMs: 30_000 },
    });
    expect((await admin.limiter.status('a.example')).pausedUntil).not.toBeNull();
    expect((await api(dashboard.url, '/api/groups/a.example/pause', { method: 'POST', body: { forMs: -1 } })).status).toBe(400);
    expect(await api(dashboard.url, '/api/groups/a.example/resume', { method: 'POST' })).toEqual({ status: 200, json: { resumed: 'a.example', woken: 0 } });
    expect((await admin.limiter.status('a.example')).pausedUntil).toBeNull();
  });

  it('reports pages per second from the fleet page counter once two readings are a second apart', async () => {
    const { space, dashboard } = await setup();
    const admin = await fleet(space);
    // The fleet's page counter, as the workers' CrawlStatsRecorder writes it.
    const statsKey = `${stateKeyPrefix(space.namespace)}:stats`;
    const before = (await api(dashboard.url, '/api/overview')).json as { rate: unknown; status: { pages: number } };
    expect(before.status.pages).toBe(0);
    await admin.redis.hincrby(statsKey, 'pages', 50);
    await admin.redis.hincrby(statsKey, 'status:2xx', 50);
    const later = await waitFor(async () => {
      const { json } = await api(dashboard.url, '/api/overview');
      const reading = json as { rate: { perSecond: number; overMs: number } | null; status: { pages: number; byStatus: Record<string, number> } };
      return reading.rate !== null && reading.status.pages === 50 ? reading : undefined;
    }, { what: 'a rate', timeoutMs: 15_000, intervalMs: 25 });
    expect(later.status.byStatus).toEqual({ '2xx': 50 });
    // 50 pages over at least a second (bounds, not a speed).
    expect(later.rate?.perSecond).toBeGreaterThan(0);
    expect(later.rate?.perSecond).toBeLessThanOrEqual(50);
    expect(later.rate?.overMs).toBeGreaterThanOrEqual(1_000);
  });
});

describe('dead-letter group filter', () => {
  it('matches a host without its port, on the page, in the API and in bulk actions', async () => {
    const { space, dashboard } = await setup();
    await seedDeadLetter(space, { id: 'fp-p1', url: 'http://127.0.0.1:18503/x', group: '127.0.0.1:18503' });
    await seedDeadLetter(space, { id: 'fp-p2', url: 'http://127.0.0.1:18504/y', group: '127.0.0.1:18504' });
    await seedDeadLetter(space, { id: 'fp-p3', url: 'http://127.0.0.10/z', group: '127.0.0.10' });

    expect(ids((await api(dashboard.url, '/api/dead-letters?group=127.0.0.1')).json).sort()).toEqual(['fp-p1', 'fp-p2']);
    expect(ids((await api(dashboard.url, '/api/dead-letters?group=127.0.0.1:18503')).json)).toEqual(['fp-p1']);
    expect(ids((await api(dashboard.url, '/api/dead-letters?group=127.0.0.1&limit=1&offset=1')).json)).toHaveLength(1);
    expect(ids((await api(dashboard.url, '/api/dead-letters?group=example.com')).json).sort()).toEqual(['fp-a', 'fp-b']);

    const page = await request(`${dashboard.url}/dead-letters?group=127.0.0.1`);
    expect(page.body).toContain('data-id="fp-p1"');
    expect(page.body).toContain('data-id="fp-p2"');
    expect(page.body).not.toContain('data-id="fp-p3"');
    expect(page.body).toContain('Retry all in this filter (2)');

    expect((await api(dashboard.url, '/api/dead-letters/retry', { method: 'POST', body: { group: '127.0.0.1' } })).json).toEqual({ retried: 2 });
    expect(await space.crawl.getJob('fp-p1')).toBeDefined();
    expect(await space.crawl.getJob('fp-p2')).toBeDefined();
    expect(await space.dlq.show('fp-p3')).not.toBeNull();
  });
});
