import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { CrawlqConfig } from '@crawlq/config';
import type { ResultsStats, ResultsStore } from '@crawlq/sink';
import type { Command } from 'commander';
import { addConfigOptions, configFrom } from '../config-options.js';

/** Options the results commands read: which database, which crawl. */
const RESULTS_OPTIONS = ['namespace', 'databaseUrl'] as const;

function fail(message: string): void {
  process.stderr.write(`crawlq: ${message}\n`);
  process.exitCode = 2;
}

/** The PostgreSQL URL, or undefined after saying what is missing. */
async function databaseOf(config: CrawlqConfig): Promise<string | undefined> {
  const { resultsTargetOf } = await import('@crawlq/crawl-control');
  const target = resultsTargetOf(config);
  if (target.kind === 'postgres') return target.url;
  fail('results are read from PostgreSQL: set --database-url or CRAWLQ_DATABASE_URL (a JSONL results file is already the export)');
  return undefined;
}

async function withStore<T>(url: string, body: (store: ResultsStore) => Promise<T>): Promise<T> {
  const { openResultsStore } = await import('@crawlq/sink');
  const store = await openResultsStore({ url, log: (line) => process.stderr.write(`${line}\n`) });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

async function writeLine(stream: Writable, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, 'drain');
}

export function registerResults(program: Command): void {
  const results = program.command('results').description('Read a crawl\'s results back from the PostgreSQL sink');

  addConfigOptions(
    results
      .command('export')
      .description('Every record of the namespace, one per URL')
      .option('--format <format>', 'jsonl or csv', 'jsonl')
      .option('--out <file>', 'write here instead of standard output'),
    RESULTS_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    // --out names this command's output file here, not the sink.
    const config = configFrom({ ...flags, out: undefined });
    const format = flags.format;
    if (format !== 'jsonl' && format !== 'csv') return fail(`--format: expected jsonl or csv (got ${JSON.stringify(format)})`);
    const url = await databaseOf(config);
    if (url === undefined) return;
    const [{ csvHeader, csvLine }, { describeResults }] = await Promise.all([import('@crawlq/sink'), import('@crawlq/crawl-control')]);
    const file = typeof flags.out === 'string' ? flags.out : undefined;
    const stream: Writable = file === undefined ? process.stdout : createWriteStream(file);
    const written = await withStore(url, async (store) => {
      let count = 0;
      if (format === 'csv') await writeLine(stream, csvHeader());
      for await (const record of store.records(config.namespace)) {
        await writeLine(stream, format === 'csv' ? csvLine(record) : `${JSON.stringify(record)}\n`);
        count += 1;
      }
      return count;
    });
    if (file !== undefined) {
      stream.end();
      await once(stream, 'close');
    }
    process.stderr.write(`exported ${written} record(s) from ${describeResults(config)}${file === undefined ? '' : ` to ${file}`}\n`);
  });

  addConfigOptions(
    results.command('stats').description('Rows, pages, statuses, re-deliveries and changes of the namespace').option('--json', 'machine-readable output'),
    RESULTS_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const url = await databaseOf(config);
    if (url === undefined) return;
    const stats = await withStore(url, (store) => store.stats(config.namespace));
    process.stdout.write(flags.json === true ? `${JSON.stringify(stats)}\n` : `${formatStats(stats)}\n`);
  });
}

function formatStats(stats: ResultsStats): string {
  const statuses = Object.entries(stats.byStatus).map(([status, count]) => `${status} ${count}`).join(', ');
  const rows: [string, string | number][] = [
    ['namespace', stats.namespace],
    ['rows', stats.rows],
    ['pages', stats.pages],
    ['skipped', stats.skipped],
    ['statuses', statuses || 'none'],
    ['groups', stats.groups],
    ['rewritten', `${stats.rewritten} (rows a retried or re-delivered job wrote again)`],
    ['first fetch', stats.firstFetchedAt ?? '-'],
    ['last fetch', stats.lastFetchedAt ?? '-'],
    ['changed', `${stats.changedPages} pages, ${stats.changes} changes (revisits that found new content)`],
    ['last change', stats.lastChangedAt ?? '-'],
    ['last check', stats.lastCheckedAt ?? '-'],
  ];
  return rows.map(([name, value]) => `${name.padEnd(12)} ${value}`).join('\n');
}
