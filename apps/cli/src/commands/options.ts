import { formatDuration, formatRate, OPTION_TABLE, type OptionName } from '@crawlq/config';
import type { Command } from 'commander';

/** The option reference, generated from the one table the parser uses, so docs cannot drift. */
export function optionsMarkdown(): string {
  const rows = (Object.keys(OPTION_TABLE) as OptionName[]).map((name) => {
    const entry = OPTION_TABLE[name];
    return `| ${entry.flag === undefined ? '—' : `\`${entry.flag}\``} | ${entry.env === undefined ? '' : `\`${entry.env}\``} | \`${name}\` | ${formatDefault(name, entry.default)} | ${entry.scope === 'fleet' ? 'fleet' : ''} | ${entry.doc} |`;
  });
  return ['| flag | environment | config file key | default | fleet-wide | meaning |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

function formatDefault(name: OptionName, value: unknown): string {
  if (value === undefined) return 'unset';
  if (name === 'rate' || name === 'globalRate') return formatRate(value as { max: number; durationMs: number } | null);
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  if (typeof value === 'number' && /(Timeout|Period|backoff|Backoff|Margin|leaseTime|maxBlocked|maxPause|robotsRetryBudget|redisOutageLimit|alertDelay|alertWindow|freeSocketTimeout)$/i.test(name)) {
    return formatDuration(value);
  }
  if (name === 'maxBodySize' && typeof value === 'number') return `${value / 1024 / 1024} MiB`;
  return `\`${JSON.stringify(value).replace(/^"|"$/g, '')}\``;
}

export function registerOptions(program: Command): void {
  program
    .command('options')
    .description('Print every option with its flag, environment variable, config key, default and whether it is fleet-wide (Markdown)')
    .action(() => {
      process.stdout.write(`${optionsMarkdown()}\n`);
    });
}
