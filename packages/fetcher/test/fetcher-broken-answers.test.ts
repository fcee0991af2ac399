import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetcher, RetryableFetchError } from '../src/index.js';

// A raw TCP server: node:http cannot write a `000` status line, reset a
// connection halfway through a body or send a body that does not decompress.
let server: net.Server;
let origin: string;
const requests = new Map<string, number>();

beforeAll(async () => {
  server = net.createServer((socket) => {
    socket.once('data', (chunk: Buffer) => {
      const path = chunk.toString('latin1').split(' ')[1] ?? '';
      requests.set(path, (requests.get(path) ?? 0) + 1);
      if (path === '/weird') {
        socket.end('HTTP/1.1 000 Weird\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi');
      } else if (path === '/reset') {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10000\r\n\r\n<html><title>cut');
        setTimeout(() => socket.resetAndDestroy(), 20);
      } else if (path === '/bad-gzip') {
        socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: 15\r\nConnection: close\r\n\r\nnot gzip at all');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

async function failure(path: string, request: { bodyPrefixBytes?: number } = {}): Promise<RetryableFetchError> {
  const fetcher = createFetcher({ allowPrivateNetwork: true, retry: { limit: 1, backoffBaseMs: 1 } });
  try {
    const error = await fetcher.fetch(`${origin}${path}`, request).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RetryableFetchError);
    return error as RetryableFetchError;
  } finally {
    fetcher.close();
  }
}

describe('a status line that holds no HTTP status', () => {
  it.each([
    ['read whole', {}],
    ['read as a prefix (robots.txt)', { bodyPrefixBytes: 100 }],
  ])('`HTTP/1.1 000 Weird` (%s) is answered like an unreachable server: retryable, no status, a message that names it', async (_how, request) => {
    const before = requests.get('/weird') ?? 0;
    const error = await failure('/weird', request);
    expect(error).toMatchObject({ retryable: true, reason: 'invalid-status', code: 'ERR_INVALID_STATUS', status: undefined });
    expect(error.message).toContain('status line 000 is not an HTTP status');
    // Not a status got retries in-process: a later attempt (the queue's) may try again.
    expect((requests.get('/weird') ?? 0) - before).toBe(1);
  });
});

describe('a response whose body cannot be read', () => {
  it.each([
    ['read whole', {}],
    ['read as a prefix (robots.txt)', { bodyPrefixBytes: 100_000 }],
  ])('a connection reset mid-body (%s) is a network failure, not an HTTP 200', async (_how, request) => {
    const error = await failure('/reset', request);
    expect(error).toMatchObject({ reason: 'network', code: 'ECONNRESET', status: undefined });
    expect(error.message).toContain('ECONNRESET (reading an HTTP 200 response)');
    expect(error.message).not.toMatch(/: HTTP 200$/);
  });

  it('a body that does not decompress is a decompression failure, not an HTTP 200', async () => {
    const error = await failure('/bad-gzip');
    expect(error).toMatchObject({ reason: 'decompression', status: undefined });
    expect(error.message).toMatch(/Z_\w+ \(reading an HTTP 200 response\)/);
  });
});
