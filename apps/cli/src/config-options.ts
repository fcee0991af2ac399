import { ConfigError, FLEET_OPTIONS, loadConfig, OPTION_SECTION, OPTION_SECTIONS, OPTION_TABLE, type CrawlqConfig, type OptionName } from '@crawlq/config';
import { Option, type Command } from 'commander';
import { formatDefault } from './option-docs.js';

/** Options that repeat (`--include a --include b`) or take comma lists. */
const LIST_OPTIONS = new Set<OptionName>(['include', 'exclude', 'alertTo', 'renderResources']);

/** How a long-running command logs. */
export const LOG_OPTIONS: readonly OptionName[] = ['logLevel', 'logFormat'];

/**
 * Options every crawl-starting command accepts: where the crawl is, every
 * fleet-wide option (a command that starts a crawl publishes them), and the
 * seeding switch.
 */
export const CRAWL_OPTIONS: readonly OptionName[] = ['redisUrl', 'redisSeeds', 'namespace', 'stateDir', ...FLEET_OPTIONS, 'sitemaps', 'stallTimeout'];

export const WORKER_OPTIONS: readonly OptionName[] = [
  ...CRAWL_OPTIONS,
  'concurrency', 'crawler', 'browserPages', 'browserRestartPages', 'browserMaxMemory', 'chromiumPath', 'screenshot', 'out', 'sink', 'databaseUrl', 'sinkBatchSize', 'storeBody', 'warc', 'warcMaxSize', 'gracePeriod', 'redisOutageLimit', 'maxSockets', 'maxFreeSockets', 'freeSocketTimeout',
  'smtpUrl', 'alertFrom', 'alertTo', 'outboxDir', 'alertDelay', 'alertWindow', 'dashboardUrl', 'dlqMaxAge', 'dlqMaxCount',
  ...LOG_OPTIONS, 'statsInterval', 'metricsPort', 'metricsHost',
];

export const ADMIN_OPTIONS: readonly OptionName[] = ['redisUrl', 'redisSeeds', 'namespace', 'stateDir'];

/**
 * Adds the table's flags for `names` to a command, plus `--config FILE`.
 * `booleanValues`: boolean flags take an optional value (`--ignore-robots false`),
 * so a command that changes a setting can also turn it off.
 */
export function addConfigOptions(command: Command, names: readonly OptionName[], options: { booleanValues?: boolean } = {}): Command {
  command.option('--config <file>', 'JSON config file (flags > environment > file > defaults)');
  // Listed by section (as --help groups options), whatever order `names` has.
  const listed = [...names].sort((a, b) => OPTION_SECTIONS.indexOf(OPTION_SECTION[a]) - OPTION_SECTIONS.indexOf(OPTION_SECTION[b]));
  for (const name of listed) {
    const entry = OPTION_TABLE[name];
    if (entry.flag === undefined) continue;
    const env = entry.env === undefined ? '' : ` [env ${entry.env}]`;
    // Shown, not set: a commander default would hide the environment and the config file.
    const shown = entry.default === undefined && entry.doc.includes('unset') ? '' : ` (default: ${formatDefault(name)})`; // the doc says what unset means
    const help = `${entry.doc}${shown}${env}`;
    let option: Option;
    if (typeof entry.default === 'boolean') {
      option = new Option(options.booleanValues === true ? `${entry.flag} [value]` : entry.flag, help);
    } else if (LIST_OPTIONS.has(name)) {
      option = new Option(`${entry.flag} <value>`, help).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    } else {
      option = new Option(`${entry.flag} <value>`, help);
    }
    command.addOption(option.helpGroup(`${OPTION_SECTION[name]}:`));
  }
  return command;
}

/**
 * Parses flags > environment > config file > defaults once; exits 2 on a bad value.
 * `env` replaces `process.env` (a command may ignore the environment's crawl settings).
 */
export function configFrom(
  flags: Record<string, unknown>,
  overrides: Partial<Record<OptionName, unknown>> = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): CrawlqConfig {
  const known: Partial<Record<OptionName, unknown>> = {};
  for (const name of Object.keys(OPTION_TABLE) as OptionName[]) {
    const flag = OPTION_TABLE[name].flag;
    const value = flag === undefined ? undefined : flags[attributeOf(flag)];
    if (value !== undefined) known[name] = value;
  }
  try {
    return loadConfig({
      flags: { ...overrides, ...known },
      env,
      configFile: typeof flags.config === 'string' ? flags.config : undefined,
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`crawlq: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** The property commander stores a flag under: `--max-depth` -> `maxDepth`. */
function attributeOf(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
