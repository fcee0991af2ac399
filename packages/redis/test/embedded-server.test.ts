import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, REDIS_SERVER_SETTINGS, resolveRedis } from '../src/index.js';

const stateDir = mkdtempSync(join(tmpdir(), 'crawlq-embedded-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe('resolveRedis without a URL', () => {
  it('starts a private server, shares it, shuts it down with the last user, and keeps the data', async () => {
    const first = await resolveRedis({ stateDir });
    expect(first.embedded).toBe(true);
    expect(first.url).not.toContain(':6379');
    const second = await resolveRedis({ stateDir });
    expect(second.url).toBe(first.url);

    // Simulate another crawlq process still connected: a client named with a foreign pid.
    const foreign = await connectRedis(first.url, { role: 'producer' });
    await foreign.client('SETNAME', 'crawlq:999999:other');
    await foreign.set('kept', 'yes');
    await first.release();
    expect(await foreign.ping()).toBe('PONG');
    foreign.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await second.release();
    const probe = await connectRedis(first.url, { role: 'producer' }).catch((error: unknown) => error);
    expect(probe).toBeInstanceOf(Error);

    const third = await resolveRedis({ stateDir });
    const client = await connectRedis(third.url, { role: 'producer' });
    expect(await client.get('kept')).toBe('yes');
    for (const [name, value] of Object.entries(REDIS_SERVER_SETTINGS)) expect(await client.config('GET', name)).toEqual([name, value]);
    client.disconnect();
    await third.release();
  });

  it('uses a given URL as is', async () => {
    const handle = await resolveRedis({ url: 'redis://127.0.0.1:1', stateDir });
    expect(handle).toMatchObject({ url: 'redis://127.0.0.1:1', embedded: false });
  });

  it('never shows the password of a Redis it cannot reach', async () => {
    const error = await connectRedis('redis://user:S3cr3t@127.0.0.1:1/0', { role: 'producer' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('redis://user:***@127.0.0.1:1/0');
    expect((error as Error).message).not.toContain('S3cr3t');
  });
});
