import { closeSync, createReadStream, fstatSync, openSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { addConfigOptions, configFrom, CRAWL_OPTIONS } from '../config-options.js';
import { pathError } from '../path-errors.js';

export function registerEnqueue(program: Command): void {
  const command = program
    .command('enqueue')
    .description('Validate, normalise and enqueue seed URLs (arguments, a file, or - for stdin)')
    .argument('[url...]', 'URLs to enqueue')
    .option('--file <file>', 'one URL per line; - reads standard input')
    .option('--sitemap <url>', 'enqueue the pages of this sitemap or sitemap index (repeatable; .gz fine)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--json', 'print the totals as one JSON object on stdout (rejected lines still go to stderr)');
  addConfigOptions(command, CRAWL_OPTIONS).action(async (urls: string[], flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const file = typeof flags.file === 'string' ? flags.file : undefined;
    const sitemapFlags = Array.isArray(flags.sitemap) ? flags.sitemap.filter((value): value is string => typeof value === 'string') : [];
    if (urls.length === 0 && file === undefined && sitemapFlags.length === 0) {
      process.stderr.write('crawlq enqueue: give URLs as arguments, --file FILE (--file - for stdin) or --sitemap URL\n');
      process.exitCode = 2;
      return;
    }
    // Opened before Redis is touched: a file that cannot be read must not leave a published definition behind.
    const fileFd = file === undefined || file === '-' ? undefined : openSeedFile(file);
    const [{ definitionAuthor, openCrawlServices, publishCrawlDefinition, Seeding }, { readSitemaps }, { addEnqueueCounts, emptyEnqueueCounts }, { checkEvictionPolicy }, { withRedis }] =
      await Promise.all([import('@crawlq/crawl-control'), import('@crawlq/crawler/sitemaps'), import('@crawlq/frontier'), import('@crawlq/redis'), import('../redis-session.js')]);
    const totals = await withRedis(config, async (redisUrl) => {
      const services = await openCrawlServices(config, redisUrl, { role: 'producer' });
      try {
        // Seeds are admitted under the fleet's definition, updated first with the options given here.
        const { notice } = await publishCrawlDefinition(services, definitionAuthor('enqueue'));
        if (notice) process.stderr.write(`warning: ${notice}\n`);
        const evictionWarning = await checkEvictionPolicy(services.redis);
        if (evictionWarning) process.stderr.write(`warning: ${evictionWarning}\n`);
        const rejectedOut = (lineNumber: number, rejected: { reason: string; message: string }) =>
          process.stderr.write(`line ${lineNumber}: rejected (${rejected.reason}): ${rejected.message}\n`);
        const sum = emptyEnqueueCounts();
        const log = (line: string) => process.stderr.write(`${line}\n`);
        const seeding = new Seeding(services, { log, sitemaps: readSitemaps });
        if (urls.length > 0) addEnqueueCounts(sum, await seeding.addSeedLines(urls, { onRejected: rejectedOut }));
        if (file !== undefined) {
          const input = fileFd === undefined ? process.stdin : createReadStream(file, { fd: fileFd });
          const lines = createInterface({ input, crlfDelay: Infinity });
          addEnqueueCounts(sum, await seeding.addSeedLines(lines, { onRejected: rejectedOut }));
        }
        if (sitemapFlags.length > 0 || config.sitemaps) {
          const seeded = await seeding.addSitemaps(sitemapFlags);
          const due = seeded.dueAgain > 0 ? `, ${seeded.dueAgain} known due again (newer lastmod)` : '';
          if (seeded.sitemaps.length > 0) log(`sitemaps: ${seeded.listed} URLs listed, ${seeded.outOfScope} out of scope, ${seeded.failed} failed${due}`);
          addEnqueueCounts(sum, seeded);
        }
        return sum;
      } finally {
        await services.close();
      }
    });
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(totals)}\n`);
      return;
    }
    process.stdout.write(
      `accepted ${totals.accepted}, duplicate ${totals.duplicate}, rejected ${totals.rejected}${totals.overLimit > 0 ? `, over --max-pages ${totals.overLimit}` : ''}\n`,
    );
  });
}

/**
 * Opens the seed file `--file` names, or refuses it in one line naming the
 * option (exit 2): a missing file, a directory, no permission.
 */
function openSeedFile(file: string): number {
  const path = resolve(file);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    if (fstatSync(fd).isDirectory()) throw Object.assign(new Error('EISDIR: illegal operation on a directory'), { code: 'EISDIR' });
    return fd;
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    throw pathError('--file', `cannot read ${path}`, error);
  }
}
