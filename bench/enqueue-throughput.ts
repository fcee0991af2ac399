// Producer benchmark: `crawlq enqueue --file` with 1,000,000 URLs.
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { startTestRedis } from '@crawlq/testing';
import { exited, fmt, peakRss, startCrawlq } from './support.js';

export async function benchEnqueue(log: (line: string) => void, urls = 1_000_000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-enqueue-'));
  const file = join(dir, 'urls.txt');
  const out = createWriteStream(file);
  for (let i = 0; i < urls; i += 1) {
    // 1,000 hosts; the default politeness (2/1s per host) spreads each host's backlog over time.
    if (!out.write(`https://host-${i % 1000}.example/section/${Math.floor(i / 1000)}/page-${i}.html\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');

  const redis = await startTestRedis();
  const client = redis.client();
  try {
    const before = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
    const started = performance.now();
    const child = startCrawlq(['enqueue', '--file', file, '--namespace', 'bench-enqueue'], { REDIS_URL: redis.url });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, peakRss(child.pid ?? 0) ?? 0)), 50);
    const code = await exited(child);
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`enqueue failed (${code}): ${stderr}`);
    const after = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
    log(`enqueue: ${stdout.trim()}`);
    log(`enqueue: ${urls.toLocaleString('en-US')} URLs in ${fmt(seconds, 2)} s (process start included) = ${fmt(urls / seconds, 0)} URLs/s (goal >= 20,000)`);
    log(`enqueue: producer peak RSS ${fmt(peak / 1024 / 1024)} MB (goal <= 200 MB)`);
    log(`enqueue: Redis memory per queued URL ${fmt((after - before) / urls, 0)} bytes, job + seen-set entry (goal <= 1 KB)`);
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
