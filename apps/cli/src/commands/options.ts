import { formatDuration, formatRate, OPTION_TABLE, optionValueKind, type OptionName } from '@crawlq/config';
import type { Command } from 'commander';

/** The option reference, generated from the one table the parser uses, so docs cannot drift. */
export function optionsMarkdown(): string {
  const rows = (Object.keys(OPTION_TABLE) as OptionName[]).map((name) => {
    const entry = OPTION_TABLE[name];
    return `| ${entry.flag === undefined ? '—' : `\`${entry.flag}\``} | ${entry.env === undefined ? '' : `\`${entry.env}\``} | \`${name}\` | ${formatDefault(name, entry.default)} | ${entry.scope === 'fleet' ? 'fleet' : ''} | ${entry.doc} |`;
  });
  return ['| flag | environment | config file key | default | fleet-wide | meaning |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

// The option's schema says how its value is spelled (not its name: a ratio
// named "...Margin" is not a duration).
function formatDefault(name: OptionName, value: unknown): string {
  if (value === undefined) return 'unset';
  const kind = optionValueKind(name);
  if (kind === 'rate') return formatRate(value as { max: number; durationMs: number } | null);
  if (kind === 'duration' && typeof value === 'number') return formatDuration(value);
  if (kind === 'bytes' && typeof value === 'number') return formatBytes(value);
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  return `\`${JSON.stringify(value).replace(/^"|"$/g, '')}\``;
}

/** The largest binary unit that divides the size evenly, as `--max-body-size` accepts it back. */
function formatBytes(value: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (value > 0 && value % size === 0) return `${value / size} ${unit}`;
  }
  return `\`${value}\``;
}

export function registerOptions(program: Command): void {
  program
    .command('options')
    .description('Print every option with its flag, environment variable, config key, default and whether it is fleet-wide (Markdown)')
    .action(() => {
      process.stdout.write(`${optionsMarkdown()}\n`);
    });
}
