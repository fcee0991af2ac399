import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedisCluster, waitFor, type TestRedisCluster } from '@crawlq/testing';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkDatabase,
  checkEvictionPolicy,
  clusterClientFor,
  connectRedis,
  defineLuaScript,
  isKnownCluster,
  openRedisFrom,
  RedisDatabaseError,
  RedisUnavailableError,
  resolveRedis,
  type RedisOutageError,
  stateKeyPrefix,
  watchRedisOutage,
  type RedisClient,
} from '../src/index.js';

// a URL naming one master of a Redis Cluster gets a Cluster client, and a
// crawl's scripts (all keys under one `{namespace}` hash tag) run on it.
let cluster: TestRedisCluster;
let redis: RedisClient;

beforeAll(async () => {
  cluster = await startTestRedisCluster();
  redis = await connectRedis(cluster.url, { role: 'worker' });
}, 180_000);
afterAll(async () => {
  redis?.disconnect();
  await cluster?.stop();
});

/** A namespace whose slot another master than the URL's serves: commands must be routed, not sent to the seed. */
async function namespaceAwayFromSeed(): Promise<string> {
  for (let index = 0; ; index += 1) {
    const namespace = `away-${index}`;
    if ((await cluster.masterOf(`{${namespace}}`)).port !== cluster.nodes[0]!.port) return namespace;
  }
}

const pairScript = defineLuaScript<[number, string]>({
  name: 'test-pair',
  keys: 2,
  lua: `
redis.call('SET', KEYS[1], ARGV[1])
local n = redis.call('INCR', KEYS[2])
return { n, redis.call('GET', KEYS[1]) }
`,
});

describe('a Redis Cluster behind one URL', () => {
  it('connectRedis detects the cluster and returns a Cluster client that reaches every master', () => {
    expect(redis).toBeInstanceOf(Cluster);
    const masters = (redis as Cluster).nodes('master');
    expect(masters.map((node) => node.options.port).sort()).toEqual(cluster.nodes.map((node) => node.port).sort());
  });

  it('runs a crawlq Lua script whose keys share the namespace tag, on the master that owns the slot', async () => {
    const namespace = await namespaceAwayFromSeed();
    const prefix = stateKeyPrefix(namespace);
    expect(await pairScript.run(redis, [`${prefix}:a`, `${prefix}:b`], ['hello'])).toEqual([1, 'hello']);
    expect(await pairScript.run(redis, [`${prefix}:a`, `${prefix}:b`], ['again'])).toEqual([2, 'again']);
    // The data is on the owner, judged on that node alone.
    const owner = cluster.nodeClient(await cluster.masterOf(`${prefix}:a`));
    expect(await owner.get(`${prefix}:a`)).toBe('again');
    expect(await cluster.nodeClient(cluster.nodes[0]!).exists(`${prefix}:a`).catch((error: Error) => error.message)).toMatch(/^MOVED /);
  });

  it('a script over keys of two slots is refused by the server (why every crawl key carries one tag)', async () => {
    await expect(pairScript.run(redis, ['{one}:a', '{two}:b'], ['x'])).rejects.toThrow(/CROSSSLOT/);
  });

  it('refuses a URL with a database number, naming the cluster, from connectRedis and checkDatabase', async () => {
    for (const url of [`${cluster.url}/3`, `${cluster.url}?db=2`]) {
      const error = await connectRedis(url, { role: 'producer' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RedisDatabaseError);
      expect((error as RedisDatabaseError).cluster).toBe(true);
      expect((error as Error).message).toMatch(/is a Redis Cluster node, and a cluster has only database 0/);
      await expect(checkDatabase(url)).rejects.toThrow(/only database 0/);
    }
  });

  it('opens Cluster clients from the same URL for BullMQ and library objects', async () => {
    const forBullmq = clusterClientFor({ url: cluster.url }, { maxRetriesPerRequest: null });
    const beside = openRedisFrom({ url: cluster.url });
    const duplicate = openRedisFrom(redis);
    try {
      for (const client of [forBullmq, beside, duplicate]) {
        expect(client).toBeInstanceOf(Cluster);
        expect(await client!.set('{opened}:k', 'v')).toBe('OK');
      }
    } finally {
      for (const client of [forBullmq, beside, duplicate]) client?.disconnect();
    }
  });

  describe('--redis-seeds: the URL names a node that does not answer', () => {
    /**
     * A loopback URL nobody listens on: port 1, on an address of its own per
     * call (what a process learns is kept per URL). A port that was free a
     * moment ago could be taken by another test's server meanwhile.
     */
    let deadHosts = 10;
    function deadUrl(suffix = ''): string {
      deadHosts += 1;
      return `redis://127.0.0.${deadHosts}:1${suffix}`;
    }
    const seeds = (): string[] => cluster.nodes.slice(1).map((node) => `127.0.0.1:${node.port}`);
    const stateDir = mkdtempSync(join(tmpdir(), 'crawlq-seeds-'));

    it('reaches the cluster through a seed: connectRedis, BullMQ and library clients, on every master', async () => {
      const url = deadUrl();
      const handle = await resolveRedis({ url, seeds: seeds(), stateDir });
      expect(handle).toMatchObject({ url, embedded: false });
      expect(isKnownCluster(url)).toBe(true);
      const connected = await connectRedis(url, { role: 'producer' });
      const forBullmq = clusterClientFor({ url }, { maxRetriesPerRequest: null });
      const beside = openRedisFrom({ url });
      try {
        for (const client of [connected, forBullmq, beside]) {
          expect(client).toBeInstanceOf(Cluster);
          // Keys of every master, the URL's own (dead) node not among them.
          for (const node of cluster.nodes) {
            let tag = 0;
            while ((await cluster.masterOf(`{seeded-${tag}}`)).port !== node.port) tag += 1;
            expect(await client!.set(`{seeded-${tag}}:k`, 'v')).toBe('OK');
          }
        }
      } finally {
        for (const client of [connected, forBullmq, beside]) client?.disconnect();
      }
    });

    it('without seeds the same dead URL is a clear error, and seeds cannot lend a cluster a database number', async () => {
      await expect(connectRedis(deadUrl(), { role: 'producer' })).rejects.toThrow(RedisUnavailableError);
      const withDatabase = deadUrl('/2');
      const error = await resolveRedis({ url: withDatabase, seeds: seeds(), stateDir }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RedisDatabaseError);
      expect((error as Error).message).toMatch(/is a Redis Cluster node, and a cluster has only database 0/);
      await expect(connectRedis(withDatabase, { role: 'producer' })).rejects.toThrow(RedisDatabaseError);
    });
  });

  it('checks the eviction policy of every master, and names the one that would evict', async () => {
    expect(await checkEvictionPolicy(redis)).toBeUndefined();
    const last = cluster.nodes[2]!;
    const node = cluster.nodeClient(last);
    await node.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      expect(await checkEvictionPolicy(redis)).toBe(`Redis master 127.0.0.1:${last.port} maxmemory-policy is "allkeys-lru"; set it to "noeviction" or queued jobs can be evicted`);
    } finally {
      await node.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });

  // Last: it restarts a master.
  it("the outage watch sees the crawl's master go away (the cluster client itself stays ready) and come back", { timeout: 180_000 }, async () => {
    const namespace = await namespaceAwayFromSeed();
    const owner = await cluster.masterOf(stateKeyPrefix(namespace));
    const events: string[] = [];
    const outages: RedisOutageError[] = [];
    const patient = watchRedisOutage(redis, {
      clusterProbeKey: stateKeyPrefix(namespace),
      limitMs: 600_000,
      onLost: () => events.push('lost'),
      onBack: () => events.push('back'),
    });
    const impatient = watchRedisOutage(redis, { clusterProbeKey: stateKeyPrefix(namespace), limitMs: 4_000, onOutage: (error) => outages.push(error) });
    try {
      const haltedAt = performance.now();
      await cluster.halt(owner);
      await waitFor(() => outages.length > 0 && events.includes('lost'), { what: 'the outage to be reported', timeoutMs: 120_000, intervalMs: 50 });
      expect(redis.status).toBe('ready');
      // Not before the limit: the loss is dated from the probe that went unanswered, which may have left a moment
      // before the halt began (CI saw 3,999.6 ms), so the wall-clock bound allows that moment. downMs comes from
      // a Node timer, which counts whole milliseconds on a clock of its own: CI saw 3,999.57, so a few ms of slack.
      expect(performance.now() - haltedAt).toBeGreaterThanOrEqual(4_000 - 50);
      expect(outages[0]?.downMs).toBeGreaterThanOrEqual(4_000 - 5);
      await cluster.start(owner);
      await waitFor(() => events.includes('back'), { what: 'the connection to come back', timeoutMs: 120_000, intervalMs: 50 });
      expect(events).toEqual(['lost', 'back']);
      expect(patient.down).toBe(false);
    } finally {
      patient.stop();
      impatient.stop();
    }
  });
});

