// Sharding: the scale bench's site crawled on a local 3-master Redis
// Cluster with --shards 1, 3 and 6, one run each. What Redis itself says each
// master did (INFO commandstats and cpu, per node): with one shard one master
// does all of a crawl's work, and its one thread caps the fleet; spread over
// shards, the busiest master's share is what caps it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDIS_SERVER_SETTINGS, shardOfGroup } from '@crawlq/redis';
import { startTestRedisCluster, type TestRedisCluster } from '@crawlq/testing';
import { redisSnapshot, redisWork, type RedisWork } from './redis-stats.js';
import { childCpuSeconds, collect, CONCURRENCY, CRAWL_FLAGS, HOSTS, PAGES_PER_HOST, spawnCrawlq, startSite } from './scale.js';
import { fmt } from './support.js';

const SHARD_COUNTS = [1, 3, 6];

interface ShardedRun {
  readonly shards: number;
  readonly pages: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** Per master, in node order. */
  readonly masters: readonly RedisWork[];
}

async function crawlOnCluster(cluster: TestRedisCluster, seeds: readonly string[], shards: number): Promise<ShardedRun> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-shards-'));
  const clients = cluster.nodes.map((node) => cluster.nodeClient(node));
  try {
    const before = await Promise.all(clients.map((client) => redisSnapshot(client)));
    const started = performance.now();
    const { stdout, stderr, code } = await collect(
      spawnCrawlq(['crawl', ...seeds, '--redis-url', cluster.url, '--namespace', `bench-shards-${shards}`, '--fresh', '--json', '--shards', String(shards), '--concurrency', String(CONCURRENCY), '--out', join(dir, 'out.jsonl'), ...CRAWL_FLAGS]),
    );
    const seconds = (performance.now() - started) / 1000;
    const after = await Promise.all(clients.map((client) => redisSnapshot(client)));
    if (code !== 0) throw new Error(`crawlq crawl --shards ${shards} exited with ${code}: ${stderr}`);
    if (process.env.BENCH_SHOW_CRAWL) process.stderr.write(stderr);
    const summary = JSON.parse(stdout) as { pages?: number };
    return { shards, pages: summary.pages ?? Number.NaN, seconds, cpuSeconds: childCpuSeconds(stderr), masters: before.map((snapshot, i) => redisWork(snapshot, after[i] ?? snapshot)) };
  } finally {
    for (const client of clients) client.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchShards(log: (line: string) => void): Promise<void> {
  const site = await startSite();
  const cluster = await startTestRedisCluster();
  try {
    // As infra/redis.conf runs a master: the test cluster's appendfsync always would measure the disk.
    for (const node of cluster.nodes) {
      const client = cluster.nodeClient(node);
      await client.config('SET', 'appendfsync', 'everysec');
      for (const [name, value] of Object.entries(REDIS_SERVER_SETTINGS)) await client.config('SET', name, value);
      client.disconnect();
    }
    log(`site: ${HOSTS.length} loopback hosts x ${fmt(PAGES_PER_HOST, 0)} pages; a local 3-master Redis Cluster (no replicas); \`crawlq crawl\` with 1 worker process, concurrency ${CONCURRENCY}, ${CRAWL_FLAGS.join(' ')}`);
    log('| --shards | pages | seconds | pages/s | Redis commands/page (all masters) | Redis CPU/page (all masters) | busiest master: share of Redis CPU | busiest master: CPU/page | pages/s before the busiest master saturates |');
    log('|---|---|---|---|---|---|---|---|---|');
    for (const shards of SHARD_COUNTS) {
      const run = await crawlOnCluster(cluster, site.seeds, shards);
      const commands = run.masters.reduce((sum, work) => sum + work.commands, 0);
      const cpu = run.masters.reduce((sum, work) => sum + work.cpuSeconds, 0);
      const busiest = Math.max(...run.masters.map((work) => work.cpuSeconds));
      log(
        `| ${shards} | ${fmt(run.pages, 0)} | ${fmt(run.seconds, 2)} | ${fmt(run.pages / run.seconds, 0)} | ${fmt(commands / run.pages, 1)} | ${fmt((cpu / run.pages) * 1e6, 0)} us | ${fmt((busiest / cpu) * 100, 0)}% | ${fmt((busiest / run.pages) * 1e6, 0)} us | ${fmt(run.pages / busiest, 0)} |`,
      );
      const groupsPerShard = Array.from({ length: shards }, (_, shard) => HOSTS.filter((host) => shardOfGroup(host, shards) === shard).length);
      log(`  --shards ${shards}: the ${HOSTS.length} groups per shard ${groupsPerShard.join('/')}; Redis CPU per master ${run.masters.map((work) => `${fmt(work.cpuSeconds, 2)} s`).join(' / ')}, commands per master ${run.masters.map((work) => fmt(work.commands, 0)).join(' / ')}; crawlq processes ${fmt((run.cpuSeconds / run.pages) * 1e6, 0)} us CPU per page`);
    }
    log('The last column is a measured cost, not a load test: pages per second of CPU on the busiest master, the rate at which its one thread would be fully busy if the cost per page held.');
  } finally {
    await cluster.stop();
    await site.close();
  }
}
