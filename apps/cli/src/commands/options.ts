import { OPTION_SECTION, OPTION_TABLE, type OptionName } from '@crawlq/config';
import type { Command } from 'commander';
import { formatDefault } from '../option-docs.js';

/** The option reference, generated from the one table the parser uses, so docs cannot drift. */
export function optionsMarkdown(): string {
  const rows = (Object.keys(OPTION_TABLE) as OptionName[]).map((name) => {
    const entry = OPTION_TABLE[name];
    return `| ${entry.flag === undefined ? '—' : `\`${entry.flag}\``} | ${entry.env === undefined ? '' : `\`${entry.env}\``} | \`${name}\` | ${formatDefault(name, { markdown: true })} | ${entry.scope === 'fleet' ? 'fleet' : ''} | ${entry.doc} |`;
  });
  return ['| flag | environment | config file key | default | fleet-wide | meaning |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** The same reference for scripts: `default` is the parsed value, `defaultText` how it is typed. */
export function optionsJson(): Record<string, unknown>[] {
  return (Object.keys(OPTION_TABLE) as OptionName[]).map((name) => {
    const entry = OPTION_TABLE[name];
    return {
      key: name,
      flag: entry.flag ?? null,
      env: entry.env ?? null,
      default: entry.default ?? null,
      defaultText: formatDefault(name),
      scope: entry.scope,
      section: OPTION_SECTION[name],
      doc: entry.doc,
    };
  });
}

export function registerOptions(program: Command): void {
  program
    .command('options')
    .description('Print every option with its flag, environment variable, config key, default and whether it is fleet-wide (Markdown)')
    .option('--json', 'one JSON array, with each option\'s help section')
    .action((flags: { json?: boolean }) => {
      process.stdout.write(flags.json === true ? `${JSON.stringify(optionsJson(), null, 2)}\n` : `${optionsMarkdown()}\n`);
    });
}
