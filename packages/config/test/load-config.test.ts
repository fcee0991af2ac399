import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDurationMs, parseRate, formatRate } from '../src/index.js';

function configFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-config-'));
  const path = join(dir, 'crawlq.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('loadConfig', () => {
  it('uses defaults when nothing is given', () => {
    const config = loadConfig();
    expect(config.scope).toBe('host');
    expect(config.rate).toEqual({ max: 2, durationMs: 1000 });
    expect(config.redisUrl).toBeUndefined();
    expect(config.attempts).toBe(3);
  });

  it('applies flags > env > file > defaults', () => {
    const file = configFile({ concurrency: 3, attempts: 7, maxDepth: 9, scope: 'any' });
    const config = loadConfig({
      configFile: file,
      env: { CRAWLQ_CONCURRENCY: '5', CRAWLQ_ATTEMPTS: '4' },
      flags: { concurrency: '8' },
    });
    expect(config.concurrency).toBe(8);
    expect(config.attempts).toBe(4);
    expect(config.maxDepth).toBe(9);
    expect(config.scope).toBe('any');
    expect(config.domainConcurrency).toBe(2);
  });

  it('parses rates, durations, sizes, lists and booleans from strings', () => {
    const config = loadConfig({
      flags: { rate: '60/1m', globalRate: 'none', gracePeriod: '10s', maxBodySize: '512kb', alertTo: 'a@x.test, b@x.test', allowPrivateNetwork: true },
      env: { CRAWLQ_IGNORE_ROBOTS: 'yes' },
    });
    expect(config.rate).toEqual({ max: 60, durationMs: 60_000 });
    expect(config.globalRate).toBeNull();
    expect(config.gracePeriod).toBe(10_000);
    expect(config.maxBodySize).toBe(512 * 1024);
    expect(config.alertTo).toEqual(['a@x.test', 'b@x.test']);
    expect(config.allowPrivateNetwork).toBe(true);
    expect(config.ignoreRobots).toBe(true);
  });

  it('names the offending option the way the user wrote it', () => {
    expect(() => loadConfig({ flags: { concurrency: 'lots' } })).toThrow(/^--concurrency: expected a whole number/);
    expect(() => loadConfig({ env: { CRAWLQ_RATE: '5 per second' } })).toThrow(/^CRAWLQ_RATE: /);
    expect(() => loadConfig({ env: { REDIS_URL: 'http://x' } })).toThrow(ConfigError);
    // ioredis would take a path that is not a number as database 0.
    expect(() => loadConfig({ env: { REDIS_URL: 'redis://:pw@h:6379/db2' } })).toThrow(/^REDIS_URL: expected a database number as the path.*"redis:\/\/:\*\*\*@h:6379\/db2"/);
    expect(loadConfig({ env: { REDIS_URL: 'redis://h:6379/2' } }).redisUrl).toBe('redis://h:6379/2');
    expect(loadConfig({ env: { REDIS_URL: 'redis://h:6379/' } }).redisUrl).toBe('redis://h:6379/');
    expect(() => loadConfig({ configFile: configFile({ scope: 'planet' }) })).toThrow(/scope/);
    expect(() => loadConfig({ configFile: configFile({ bogus: 1 }) })).toThrow(/unknown option "bogus"/);
    expect(() => loadConfig({ configFile: configFile('{nope') })).toThrow(/not valid JSON/);
  });

  it('takes more cluster nodes as host:port, comma-separated, only beside a Redis URL', () => {
    const url = 'redis://h:7000';
    expect(loadConfig({ env: { REDIS_URL: url, REDIS_SEEDS: 'a:7001, 10.0.0.2:7002,[::1]:7003' } }).redisSeeds).toEqual(['a:7001', '10.0.0.2:7002', '[::1]:7003']);
    expect(loadConfig({ env: { REDIS_URL: url } }).redisSeeds).toBeUndefined();
    for (const bad of ['a', 'a:0', 'a:700000', 'redis://a:7001', 'a:7001;b:7002']) {
      expect(() => loadConfig({ env: { REDIS_URL: url, REDIS_SEEDS: bad } }), bad).toThrow(/^REDIS_SEEDS: expected host:port of a cluster node, comma-separated/);
    }
    expect(() => loadConfig({ flags: { redisSeeds: 'a:7001' } })).toThrow(/^--redis-seeds: needs --redis-url \(or REDIS_URL\)/);
  });

  it('takes a Redis outage limit above zero, 5 minutes by default', () => {
    expect(loadConfig().redisOutageLimit).toBe(300_000);
    expect(loadConfig({ env: { CRAWLQ_REDIS_OUTAGE_LIMIT: '4s' } }).redisOutageLimit).toBe(4_000);
    expect(loadConfig({ flags: { redisOutageLimit: '2m' } }).redisOutageLimit).toBe(120_000);
    expect(() => loadConfig({ flags: { redisOutageLimit: '0s' } })).toThrow(/^--redis-outage-limit: expected a duration greater than 0/);
    expect(() => loadConfig({ env: { CRAWLQ_REDIS_OUTAGE_LIMIT: 'soon' } })).toThrow(/^CRAWLQ_REDIS_OUTAGE_LIMIT: expected a duration/);
  });

  it('reads per-group limit rules from the config file', () => {
    const config = loadConfig({
      configFile: configFile({ limitRules: [{ match: '*.example.com', rate: '2/1s', concurrency: 1 }] }),
    });
    expect(config.limitRules).toEqual([{ match: '*.example.com', rate: { max: 2, durationMs: 1000 }, concurrency: 1 }]);
  });

  it('returns a frozen object', () => {
    const config = loadConfig({ flags: { include: 'a,b' } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.include)).toBe(true);
    expect(() => {
      (config as { scope: string }).scope = 'any';
    }).toThrow(TypeError);
  });
});

describe('units', () => {
  it('parses durations and rates', () => {
    expect(parseDurationMs('500ms')).toBe(500);
    expect(parseDurationMs('1.5s')).toBe(1500);
    expect(parseDurationMs('10m')).toBe(600_000);
    expect(parseDurationMs('s')).toBe(1000);
    expect(parseDurationMs('soon')).toBeUndefined();
    expect(parseRate('5/1s')).toEqual({ max: 5, durationMs: 1000 });
    expect(parseRate('10/s')).toEqual({ max: 10, durationMs: 1000 });
    expect(parseRate('0/1s')).toBeUndefined();
    expect(parseRate('5')).toBeUndefined();
    expect(formatRate({ max: 60, durationMs: 60_000 })).toBe('60/1m');
  });
});

describe('explicit options', () => {
  it('lists the options that did not come from defaults', () => {
    const config = loadConfig({ flags: { rate: '5/1s' }, env: { CRAWLQ_BURST: '2' } });
    expect([...config.explicit].sort()).toEqual(['burst', 'rate']);
    expect(loadConfig().explicit).toEqual([]);
  });
});
