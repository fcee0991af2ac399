// Producer benchmark: `crawlq enqueue --file` with 1,000,000 URLs.
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { startTestRedis } from '@crawlq/testing';
import { cpuSeconds, exited, fmt, peakRss, startCrawlq } from './support.js';

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
    const redisCpuBefore = redisCpuSeconds(await client.info('cpu'));
    const started = performance.now();
    const child = startCrawlq(['enqueue', '--file', file, '--namespace', 'bench-enqueue'], { REDIS_URL: redis.url });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let peak = 0;
    let cpu = 0;
    // Read while the process lives: VmHWM is its high-water mark, and the CPU time is at most 50 ms short.
    const sampler = setInterval(() => {
      peak = Math.max(peak, peakRss(child.pid ?? 0) ?? 0);
      cpu = Math.max(cpu, cpuSeconds(child.pid ?? 0) ?? 0);
    }, 50);
    const code = await exited(child);
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`enqueue failed (${code}): ${stderr}`);
    const after = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
    const redisCpu = redisCpuSeconds(await client.info('cpu')) - redisCpuBefore;
    log(`enqueue: ${stdout.trim()}`);
    log(`enqueue: ${urls.toLocaleString('en-US')} URLs in ${fmt(seconds, 2)} s (process start included) = ${fmt(urls / seconds, 0)} URLs/s (goal >= 30,000)`);
    log(`enqueue: producer peak RSS ${fmt(peak / 1024 / 1024)} MB (goal <= 200 MB)`);
    // CPU per URL holds on a busy machine, where the rate above does not.
    log(`enqueue: CPU per URL: producer ${fmt((cpu * 1e6) / urls, 0)} µs, Redis ${fmt((redisCpu * 1e6) / urls, 0)} µs`);
    log(`enqueue: Redis memory per queued URL ${fmt((after - before) / urls, 0)} bytes, backlog entry + seen-set entry (goal <= 200)`);
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function redisCpuSeconds(info: string): number {
  return Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);
}
