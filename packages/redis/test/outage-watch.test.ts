import { startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectRedis, RedisOutageError, watchRedisOutage, type RedisOutageWatch , type RedisClient } from '../src/index.js';

// a process rides through a short Redis outage and gives up, once, on one
// longer than its limit. A real redis-server is stopped and started again.
let server: TestRedis;
let redis: RedisClient;
let watch: RedisOutageWatch | undefined;

beforeEach(async () => {
  server = await startTestRedis();
  redis = await connectRedis(server.url, { role: 'coordinator' });
});
afterEach(async () => {
  watch?.stop();
  redis.disconnect();
  await server.stop();
});

describe('watchRedisOutage', () => {
  it('reports a short outage once, however many reconnects fail, and does not give up', async () => {
    const events: string[] = [];
    let closes = 0;
    redis.on('close', () => (closes += 1));
    watch = watchRedisOutage(redis, {
      limitMs: 60_000,
      onLost: () => events.push('lost'),
      onBack: (downMs) => events.push(`back ${downMs > 0}`),
      onOutage: () => events.push('outage'),
    });
    await server.halt();
    // Several reconnect attempts fail (each one closes the connection again).
    await waitFor(() => closes >= 3, { what: 'three failed reconnects', timeoutMs: 30_000, intervalMs: 20 });
    expect(watch.down).toBe(true);
    await server.start();
    await waitFor(() => events.length >= 2, { what: 'the connection to be ready again', timeoutMs: 30_000, intervalMs: 20 });
    expect(events).toEqual(['lost', 'back true']);
    expect(watch.down).toBe(false);
    expect(await redis.ping()).toBe('PONG');
  });

  it('gives up once the connection has been down longer than the limit, and reconnecting goes on', async () => {
    const outages: RedisOutageError[] = [];
    let backs = 0;
    let lostAt = 0;
    watch = watchRedisOutage(redis, {
      limitMs: 400,
      onLost: () => (lostAt = performance.now()),
      onBack: () => (backs += 1),
      onOutage: (error) => outages.push(error),
    });
    await server.halt();
    await waitFor(() => outages.length > 0, { what: 'the outage', timeoutMs: 30_000, intervalMs: 20 });
    const [outage] = outages;
    expect(outage).toBeInstanceOf(RedisOutageError);
    expect(outage?.limitMs).toBe(400);
    // Not before the limit, measured from the loss. Node's timers count whole milliseconds on a clock of their
    // own, so against performance.now() one can fire a fraction of a millisecond early (seen: 398.9 ms).
    expect(outage?.downMs).toBeGreaterThanOrEqual(395);
    expect(performance.now() - lostAt).toBeGreaterThanOrEqual(395);
    expect(outage?.message).toMatch(/^Redis unreachable for \d+\.\d s \(limit 0\.4 s\)$/);

    // The watch has ended: Redis coming back reports nothing more, but the connection is usable again.
    await server.start();
    await waitFor(() => redis.status === 'ready', { what: 'the reconnect', timeoutMs: 30_000, intervalMs: 20 });
    expect(await redis.ping()).toBe('PONG');
    expect(outages).toHaveLength(1);
    expect(backs).toBe(0);
  });

  it('stop() ends the watch: closing the connection on purpose is no outage', async () => {
    let outages = 0;
    watch = watchRedisOutage(redis, { limitMs: 50, onOutage: () => (outages += 1) });
    watch.stop();
    redis.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(outages).toBe(0);
  });
});

describe('RedisOutageError', () => {
  it('says how long Redis was gone and what the limit was', () => {
    expect(new RedisOutageError(4_012, 4_000).message).toBe('Redis unreachable for 4.0 s (limit 4 s)');
    expect(new RedisOutageError(300_004, 300_000).message).toBe('Redis unreachable for 300.0 s (limit 5 min)');
    expect(new RedisOutageError(1_534, 1_500)).toMatchObject({ name: 'RedisOutageError', downMs: 1_534, limitMs: 1_500 });
  });
});
