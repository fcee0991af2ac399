import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, PermanentFetchError } from '../src/index.js';

// A raw TCP server: node:http cannot write a `000` status line.
let server: net.Server;
let origin: string;
let requests = 0;

beforeAll(async () => {
  server = net.createServer((socket) => {
    socket.once('data', () => {
      requests += 1;
      socket.end('HTTP/1.1 000 Weird\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a status line that holds no HTTP status', () => {
  it('`HTTP/1.1 000 Weird` is a permanent failure that names it, not a result with status 0, and is not retried', async () => {
    const fetcher = createFetcher({ allowPrivateNetwork: true, retry: { limit: 2 } });
    try {
      const error = await fetcher.fetch(`${origin}/page`).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PermanentFetchError);
      expect(error).toMatchObject({ reason: 'invalid-status', retryable: false });
      expect((error as Error).message).toContain('000');
      expect(requests).toBe(1);
    } finally {
      fetcher.close();
    }
  });
});
