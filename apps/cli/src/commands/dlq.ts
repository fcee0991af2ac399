import { createInterface } from 'node:readline/promises';
import { parseDurationMs, type CrawlqConfig } from '@crawlq/config';
import type { DeadLetterEntry, DeadLetterAdmin } from '@crawlq/dead-letter';
import type { Command } from 'commander';
import { addConfigOptions, ADMIN_OPTIONS, CRAWL_OPTIONS, configFrom } from '../config-options.js';

async function withDeadLetters<T>(config: CrawlqConfig, body: (deadLetters: DeadLetterAdmin, redisUrl: string) => Promise<T>): Promise<T> {
  const [{ createDeadLetterAdmin }, { withRedis }] = await Promise.all([import('@crawlq/dead-letter'), import('../redis-session.js')]);
  return withRedis(config, async (redisUrl) => {
    const deadLetters = createDeadLetterAdmin({ connection: { url: redisUrl }, namespace: config.namespace });
    try {
      return await body(deadLetters, redisUrl);
    } finally {
      await deadLetters.close();
    }
  });
}

/** Commander gives option values as strings (or true for bare flags). */
function textFlag(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function fail(message: string): void {
  process.stderr.write(`crawlq: ${message}\n`);
  process.exitCode = 2;
}

export function registerDlq(program: Command): void {
  const dlq = program.command('dlq').description('Review dead letters: jobs that used all their attempts or failed permanently');

  addConfigOptions(
    dlq
      .command('list')
      .description('List dead letters, newest first')
      .option('--group <group>', 'only this group (domain)')
      .option('--reason <reason>', 'only this reason (http-503, timeout, ssrf, ...)')
      .option('--since <duration>', 'only those failed within this long (e.g. 1h)')
      .option('--limit <n>', 'at most this many', '100')
      .option('--json', 'machine-readable output'),
    ADMIN_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const limit = Number(flags.limit);
    const sinceMs = flags.since === undefined ? undefined : parseDurationMs(textFlag(flags.since));
    if (!Number.isInteger(limit) || limit < 1) return fail(`--limit: expected a whole number (got ${JSON.stringify(flags.limit)})`);
    if (flags.since !== undefined && sinceMs === undefined) return fail(`--since: expected a duration such as 1h (got ${JSON.stringify(flags.since)})`);
    const entries = await withDeadLetters(config, (deadLetters) =>
      deadLetters.list({
        ...(typeof flags.group === 'string' ? { group: flags.group } : {}),
        ...(typeof flags.reason === 'string' ? { reason: flags.reason } : {}),
        ...(sinceMs === undefined ? {} : { since: new Date(Date.now() - sinceMs) }),
        limit,
      }),
    );
    if (flags.json === true) {
      process.stdout.write(`${JSON.stringify(entries.map(summarise))}\n`);
      return;
    }
    if (entries.length === 0) {
      process.stdout.write('no dead letters\n');
      return;
    }
    for (const entry of entries) {
      process.stdout.write(`${entry.id}  ${entry.lastFailedAt}  ${entry.reason.padEnd(16)} ${String(entry.status ?? '-').padEnd(4)} ${entry.attempts}x  ${entry.url}\n`);
    }
  });

  addConfigOptions(dlq.command('show').description('Everything kept about one dead letter').argument('<id>'), ADMIN_OPTIONS).action(
    async (id: string, flags: Record<string, unknown>) => {
      const config = configFrom(flags);
      const entry = await withDeadLetters(config, (deadLetters) => deadLetters.show(id));
      if (entry === null) {
        process.stderr.write(`crawlq: no dead letter with id ${id}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(`${JSON.stringify(entry, null, 2)}\n`);
    },
  );

  addConfigOptions(
    dlq
      .command('retry')
      .description('Put dead letters back into the crawl with a fresh attempt budget')
      .argument('[id...]')
      .option('--all', 'every dead letter')
      .option('--group <group>', 'every dead letter of this group'),
    CRAWL_OPTIONS,
  ).action(async (ids: string[], flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const selector =
      flags.all === true ? ({ all: true } as const) : typeof flags.group === 'string' ? { group: flags.group } : ids.length > 0 ? { ids } : undefined;
    if (selector === undefined) return fail('dlq retry: give ids, --group G or --all');
    const { retried } = await withDeadLetters(config, async (deadLetters, redisUrl) => {
      const { openDeadLetterRetry } = await import('@crawlq/crawl-control');
      const target = await openDeadLetterRetry(config, redisUrl);
      try {
        return await deadLetters.retry(selector, (group) => target.queueOf(group), target.policy);
      } finally {
        await target.close();
      }
    });
    process.stdout.write(`retried ${retried}\n`);
  });

  addConfigOptions(
    dlq
      .command('purge')
      .description('Delete dead letters')
      .option('--older-than <duration>', 'only those failed longer ago than this')
      .option('--all', 'every dead letter')
      .option('--yes', 'do not ask'),
    ADMIN_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const olderThanMs = flags.olderThan === undefined ? undefined : parseDurationMs(textFlag(flags.olderThan));
    if (flags.olderThan !== undefined && olderThanMs === undefined) return fail('--older-than: expected a duration such as 7d');
    if (flags.all !== true && olderThanMs === undefined) return fail('dlq purge: give --older-than T or --all');
    if (flags.yes !== true) {
      if (!process.stdin.isTTY) return fail('dlq purge: refusing to delete without a terminal to ask; add --yes');
      const prompt = createInterface({ input: process.stdin, output: process.stdout });
      const answer = await prompt.question(`Delete ${flags.all === true ? 'ALL' : 'the older'} dead letters in namespace "${config.namespace}"? [y/N] `);
      prompt.close();
      if (!/^y(es)?$/i.test(answer.trim())) {
        process.stdout.write('nothing deleted\n');
        return;
      }
    }
    const { purged } = await withDeadLetters(config, (deadLetters) =>
      deadLetters.purge(olderThanMs === undefined ? { all: true } : { olderThanMs }),
    );
    process.stdout.write(`purged ${purged}\n`);
  });

  addConfigOptions(
    dlq.command('export').description('Write dead letters to a file: .csv for CSV, anything else JSONL').requiredOption('--out <file>', 'where to write'),
    ADMIN_OPTIONS,
  ).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const { written } = await withDeadLetters(config, (deadLetters) => deadLetters.export(String(flags.out)));
    process.stdout.write(`wrote ${written} dead letters to ${String(flags.out)}\n`);
  });

  addConfigOptions(dlq.command('stats').description('Counts by group and reason').option('--json', 'machine-readable output'), ADMIN_OPTIONS).action(
    async (flags: Record<string, unknown>) => {
      const config = configFrom(flags);
      const stats = await withDeadLetters(config, (deadLetters) => deadLetters.stats());
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify(stats)}\n`);
        return;
      }
      const table = (title: string, counts: Record<string, number>) =>
        [`${title}:`, ...Object.entries(counts).sort(([, a], [, b]) => b - a).map(([key, count]) => `  ${String(count).padStart(6)}  ${key}`)].join('\n');
      process.stdout.write(`total ${stats.total}\n${table('by group', stats.byGroup)}\n${table('by reason', stats.byReason)}\n`);
    },
  );
}

function summarise(entry: DeadLetterEntry) {
  return {
    id: entry.id,
    url: entry.url,
    group: entry.group,
    reason: entry.reason,
    status: entry.status,
    attempts: entry.attempts,
    failedAt: entry.lastFailedAt,
    firstFailedAt: entry.firstFailedAt,
    errorClass: entry.errorClass,
    message: entry.message,
  };
}
