import type { Command } from 'commander';
import { addConfigOptions, ADMIN_OPTIONS, configFrom } from '../config-options.js';

export function registerStatus(program: Command): void {
  const command = program.command('status').description('Queue counts; done is true when nothing is left to crawl').option('--json', 'machine-readable output');
  addConfigOptions(command, ADMIN_OPTIONS).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const [{ openCrawlServices, readCrawlStatus }, { createDeadLetterAdmin }, { formatStatusTable }, { withRedis }] = await Promise.all([
      import('@crawlq/crawl-control'),
      import('@crawlq/dead-letter'),
      import('../output.js'),
      import('../redis-session.js'),
    ]);
    const status = await withRedis(config, async (redisUrl) => {
      const services = await openCrawlServices(config, redisUrl, { role: 'producer' });
      const deadLetters = createDeadLetterAdmin({ connection: { url: redisUrl }, namespace: config.namespace });
      try {
        return await readCrawlStatus(services, () => deadLetters.count());
      } finally {
        await deadLetters.close();
        await services.close();
      }
    });
    if (flags.json === true) {
      // `seen` only grows: a script deciding the crawl is over compares it across two `done` reads (shards are read one after another).
      const { backlog, waiting, delayed, active, failed, deadLettered, done, pages, byStatus, skipped, seen, revisits } = status;
      process.stdout.write(`${JSON.stringify({ backlog, waiting, delayed, active, completed: pages, failed, deadLettered, done, seen, byStatus, skipped, revisits })}\n`);
    } else {
      process.stdout.write(`${formatStatusTable(status)}\n`);
    }
  });
}
