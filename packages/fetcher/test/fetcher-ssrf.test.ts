import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, PermanentFetchError, RetryableFetchError } from '../src/index.js';
import type { Fetcher, FetcherOptions } from '../src/index.js';
import { startServer } from './test-server.js';
import type { TestServer } from './test-server.js';

// Every test here runs with the SSRF guard ON (allowPrivateNetwork: false). The
// only server is on 127.0.0.1; "start.test" and friends are mapped to it by an
// injected resolver, and a custom address policy lets exactly one name through,
// standing in for "a public host". Nothing ever leaves loopback.

let server: TestServer;
let fetcher: Fetcher | undefined;

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/to-literal':
        res.writeHead(302, { location: `http://127.0.0.1:${server.port}/secret` });
        res.end();
        return;
      case '/to-name':
        res.writeHead(302, { location: `http://inner.test:${server.port}/secret` });
        res.end();
        return;
      case '/to-mapped':
        res.writeHead(302, { location: `http://[::ffff:127.0.0.1]:${server.port}/secret` });
        res.end();
        return;
      case '/to-self':
        res.writeHead(302, { location: '/ok' });
        res.end();
        return;
      default:
        res.end('ok');
    }
  });
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  fetcher?.close();
  fetcher = undefined;
});

const names: Record<string, readonly string[]> = {
  'start.test': ['127.0.0.1'],
  'inner.test': ['127.0.0.1'],
  'two.test': ['127.0.0.2', '127.0.0.1'],
};

/** Test DNS: a fixed table, never the network. */
const resolve = (hostname: string): Promise<readonly string[]> => Promise.resolve(names[hostname] ?? []);

/** Stand-in for "public": only start.test (and its address) may be reached. */
const onlyStartTest = (address: string, host: string): boolean => host === 'start.test' && address === '127.0.0.1';

function open(options: FetcherOptions = {}): Fetcher {
  fetcher = createFetcher({ resolve, retry: { backoffBaseMs: 10 }, ...options });
  return fetcher;
}

async function refused(url: string, options?: FetcherOptions): Promise<PermanentFetchError> {
  const error = await open(options)
    .fetch(url)
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PermanentFetchError);
  return error as PermanentFetchError;
}

describe('SSRF guard with the default policy (public addresses only)', () => {
  it.each([
    ['an IPv4 loopback literal', (port: number) => `http://127.0.0.1:${port}/ok`],
    ['a decimal-encoded loopback', (port: number) => `http://2130706433:${port}/ok`],
    ['0.0.0.0', (port: number) => `http://0.0.0.0:${port}/ok`],
    ['an IPv6 loopback literal', (port: number) => `http://[::1]:${port}/ok`],
    ['an IPv4-mapped IPv6 loopback', (port: number) => `http://[::ffff:127.0.0.1]:${port}/ok`],
  ])('refuses %s before connecting', async (_label, make) => {
    const before = server.requests.length;
    const connections = server.connections();
    const error = await refused(make(server.port), { resolve: undefined });
    expect(error).toMatchObject({ reason: 'ssrf', retryable: false });
    // The refusal says how to lift it.
    expect(error.message).toContain('--allow-private-network');
    expect(server.requests.length).toBe(before);
    expect(server.connections()).toBe(connections);
  });

  it('refuses localhost, resolved through node:dns', async () => {
    const before = server.requests.length;
    const error = await refused(`http://localhost:${server.port}/ok`, { resolve: undefined });
    expect(error.reason).toBe('ssrf');
    expect(error.message).toMatch(/localhost resolves to .*--allow-private-network/);
    expect(server.requests.length).toBe(before);
  });

  it('refuses a name the resolver maps to loopback', async () => {
    const before = server.requests.length;
    const error = await refused(`http://start.test:${server.port}/ok`);
    expect(error.reason).toBe('ssrf');
    expect(server.requests.length).toBe(before);
  });

  it('fails an unresolvable name with a retryable ENOTFOUND, without got retries', async () => {
    const error = await open()
      .fetch(`http://nowhere.test:${server.port}/ok`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryableFetchError);
    expect(error).toMatchObject({ code: 'ENOTFOUND', retries: 0 });
  });
});

describe('SSRF guard on redirects (custom policy allows start.test only)', () => {
  it('allows the permitted host', async () => {
    const result = await open({ isAddressAllowed: onlyStartTest }).fetch(`http://start.test:${server.port}/to-self`);
    expect(result.status).toBe(200);
    expect(result.redirects).toEqual([`http://start.test:${server.port}/ok`]);
  });

  it.each(['/to-literal', '/to-mapped', '/to-name'])(
    'refuses a redirect (%s) to loopback; the secret is never requested',
    async (path) => {
      const secretsBefore = server.count('/secret');
      const hopsBefore = server.count(path);
      const error = await refused(`http://start.test:${server.port}${path}`, { isAddressAllowed: onlyStartTest });
      expect(error).toMatchObject({ reason: 'ssrf', url: `http://start.test:${server.port}${path}` });
      expect(server.count(path)).toBe(hopsBefore + 1);
      expect(server.count('/secret')).toBe(secretsBefore);
    },
  );

  it('does not let a pooled socket to the same ip:port serve a refused host', async () => {
    const f = open({ isAddressAllowed: onlyStartTest });
    // Leaves a keep-alive socket to 127.0.0.1:port in the pool, keyed by start.test.
    await f.fetch(`http://start.test:${server.port}/ok`);
    const secretsBefore = server.count('/secret');
    await expect(f.fetch(`http://127.0.0.1:${server.port}/secret`)).rejects.toMatchObject({ reason: 'ssrf' });
    await expect(f.fetch(`http://inner.test:${server.port}/secret`)).rejects.toMatchObject({ reason: 'ssrf' });
    expect(server.count('/secret')).toBe(secretsBefore);
  });

  it('connects only to the allowed addresses of a name that also resolves to refused ones', async () => {
    // two.test -> [127.0.0.2, 127.0.0.1]; only 127.0.0.1 is allowed (and only it has a server).
    const result = await open({
      isAddressAllowed: (address) => address === '127.0.0.1',
    }).fetch(`http://two.test:${server.port}/ok`);
    expect(result.status).toBe(200);
  });
});

describe('allowPrivateNetwork', () => {
  it('turns the guard off', async () => {
    const result = await open({ allowPrivateNetwork: true, resolve: undefined }).fetch(
      `http://localhost:${server.port}/ok`,
    );
    expect(result.status).toBe(200);
  });

  it('still uses an injected resolver', async () => {
    const result = await open({ allowPrivateNetwork: true }).fetch(`http://inner.test:${server.port}/ok`);
    expect(result.status).toBe(200);
  });
});
