import { formatDuration, formatRate, OPTION_TABLE, optionValueKind, type OptionName } from '@crawlq/config';

/**
 * An option's default as a user would type it back (`2/1s`, `30s`, `10 MiB`),
 * for `--help` (plain) and `crawlq options` (Markdown, literals in backticks).
 * The option's schema says how its value is spelled (not its name: a ratio
 * named "...Margin" is not a duration).
 */
export function formatDefault(name: OptionName, options: { markdown?: boolean } = {}): string {
  const value: unknown = OPTION_TABLE[name].default;
  const literal = (text: string) => (options.markdown === true ? `\`${text}\`` : text);
  if (value === undefined) return 'unset';
  const kind = optionValueKind(name);
  if (kind === 'rate') return formatRate(value as { max: number; durationMs: number } | null);
  if (value === null) return literal('none');
  if (kind === 'duration' && typeof value === 'number') return formatDuration(value);
  if (kind === 'bytes' && typeof value === 'number') return formatBytes(value) ?? literal(String(value));
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(', ');
  return literal(JSON.stringify(value).replace(/^"|"$/g, ''));
}

/** The largest binary unit that divides the size evenly, as `--max-body-size` accepts it back. */
function formatBytes(value: number): string | undefined {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (value > 0 && value % size === 0) return `${value / size} ${unit}`;
  }
  return undefined;
}
