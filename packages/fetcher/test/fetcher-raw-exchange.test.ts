import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher } from '../src/index.js';
import type { Fetcher } from '../src/index.js';
import { startServer } from './test-server.js';
import type { TestServer } from './test-server.js';

const page = '<html><title>raw</title><body>bytes as sent</body></html>'.repeat(20);

let server: TestServer;
let fetcher: Fetcher;

beforeAll(async () => {
  server = await startServer((req, res) => {
    if (req.url === '/moved') {
      res.writeHead(302, { Location: '/gzip' });
      res.end('moving');
      return;
    }
    const compressed = gzipSync(Buffer.from(page));
    res.writeHead(200, 'Fine Thanks', { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip', 'X-Mixed-Case': 'kept', 'Set-Cookie': 'a=1' });
    res.end(compressed);
  });
  fetcher = createFetcher({ allowPrivateNetwork: true, retry: { limit: 0 } });
});
afterAll(async () => {
  fetcher.close();
  await server.close();
});

describe('captureExchange', () => {
  it('keeps the final request and the response as received: header case and order, compressed body', async () => {
    const result = await fetcher.fetch(`${server.origin}/moved`, { captureExchange: true });
    expect(result.body.toString()).toBe(page);
    const exchange = result.exchange;
    expect(exchange).toBeDefined();
    if (!exchange) return;
    // The last hop only, not the redirect.
    expect(exchange.request.method).toBe('GET');
    expect(exchange.request.target).toBe('/gzip');
    expect(exchange.request.headers.find(([name]) => name.toLowerCase() === 'host')?.[1]).toBe(`127.0.0.1:${server.port}`);
    expect(exchange.request.headers.find(([name]) => name.toLowerCase() === 'user-agent')).toBeDefined();
    expect(exchange.response.status).toBe(200);
    expect(exchange.response.statusText).toBe('Fine Thanks');
    expect(exchange.response.httpVersion).toBe('1.1');
    expect(exchange.response.headers).toContainEqual(['X-Mixed-Case', 'kept']);
    expect(exchange.response.headers).toContainEqual(['Content-Encoding', 'gzip']);
    // The archive keeps what the server sent, Set-Cookie included; the body is still gzip.
    expect(exchange.response.headers).toContainEqual(['Set-Cookie', 'a=1']);
    expect(gunzipSync(exchange.response.body).toString()).toBe(page);
  });

  it('is absent unless asked for', async () => {
    const result = await fetcher.fetch(`${server.origin}/gzip`);
    expect(result.exchange).toBeUndefined();
  });
});
