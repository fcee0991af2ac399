import { readFileSync } from 'node:fs';
import type { PageRecord } from '@crawlq/crawl-control';
import { formatPrettyLine, resolveFormat } from '@crawlq/logging';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, WORKER_OPTIONS } from '../config-options.js';
import { CLI } from '../review-command.js';
import { printSummary } from './summary.js';

const DEMO_HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

export function registerDemo(program: Command): void {
  const command = program
    .command('demo')
    .description('Serve a bundled demo site on loopback (3 hosts, 300 pages, broken links, a slow page) and crawl it')
    .option('--workers <n>', 'worker processes to run');
  addConfigOptions(command, WORKER_OPTIONS).action(async (flags: Record<string, unknown>) => {
    // The demo crawls loopback, so it must allow private addresses; it runs in
    // its own namespace and starts fresh each time.
    const config = configFrom(flags, {
      allowPrivateNetwork: true,
      namespace: 'crawlq-demo',
      scope: 'any',
      maxDepth: 20,
      rate: '25/1s',
      domainConcurrency: 4,
      out: './demo-results.jsonl',
      attempts: 2,
      backoff: '200ms',
      alertDelay: '1s',
    });
    const [{ startDemoSite }, { runCrawl }, { progressWriter }, { withRedis }, { createWorkerLauncher }] = await Promise.all([
      import('@crawlq/demo-site'),
      import('@crawlq/crawler'),
      import('../output.js'),
      import('../redis-session.js'),
      import('../worker-launcher.js'),
    ]);
    const site = await startDemoSite({
      hosts: DEMO_HOSTS,
      pagesPerHost: 100,
      linksPerPage: 6,
      crossHostLinksPerPage: 1,
      brokenLinksPerPage: 1,
      slowPages: [{ path: '/p/42', delayMs: 1500 }],
      faults: [{ path: '/p/7', status: 503, times: 1 }],
    });
    try {
      process.stdout.write(`demo site: ${site.seeds.join('  ')}\n`);
      const code = await withRedis(config, async (redisUrl) => {
        const progress = await progressWriter((line) => process.stderr.write(`${line}\n`), { total: config.maxPages });
        // The workers' lines come through here, so they are written above the progress line, never onto it.
        const pretty = resolveFormat(config.logFormat, progress.logStream) === 'pretty';
        const launcher = createWorkerLauncher(config, redisUrl, {
          stderrLine: (line) => progress.write(pretty ? formatPrettyLine(line, progress.color) : line),
        });
        try {
          const summary = await runCrawl({
            config,
            redisUrl,
            seeds: [site.seeds[0] ?? ''],
            spawnWorker: (index) => launcher.spawn(index),
            cli: CLI,
            log: (line) => progress.write(`${line}\n`),
            progress: (status, elapsedMs) => progress.update(status, elapsedMs),
            fresh: true,
          });
          progress.done();
          printSummary(summary, config.out, { namespace: config.namespace });
          printSamples(config.out);
          return 0;
        } finally {
          launcher.dispose();
        }
      });
      process.exitCode = code;
    } finally {
      await site.close();
    }
  });
}

function printSamples(out: string): void {
  const records = readFileSync(out, 'utf8')
    .trimEnd()
    .split('\n')
    .slice(-3)
    .map((line) => JSON.parse(line) as PageRecord);
  process.stdout.write('last records:\n');
  for (const record of records) {
    process.stdout.write(`  ${record.status} ${record.url}  "${record.title ?? ''}"  ${record.links.length} links, wait ${record.timings.waitMs} ms, fetch ${record.timings.fetchMs} ms\n`);
  }
}
