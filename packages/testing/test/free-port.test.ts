import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePortPair } from '../src/index.js';

describe('freePortPair', () => {
  it('gives two consecutive ports below the ephemeral range that a server can listen on', async () => {
    const port = await freePortPair();
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port + 1).toBeLessThan(32_768);
    const servers = [createServer(), createServer()];
    await Promise.all(servers.map((server, index) => new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port + index, '127.0.0.1', resolve);
    })));
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
});
