import { ConfigError, loadConfig, OPTION_TABLE, type CrawlqConfig, type OptionName } from '@crawlq/config';
import { Option, type Command } from 'commander';

/** Options that repeat (`--include a --include b`) or take comma lists. */
const LIST_OPTIONS = new Set<OptionName>(['include', 'exclude', 'alertTo']);

/** How a long-running command logs. */
export const LOG_OPTIONS: readonly OptionName[] = ['logLevel', 'logFormat'];

/** Options every crawl-running command accepts. */
export const CRAWL_OPTIONS: readonly OptionName[] = [
  'redisUrl', 'namespace', 'stateDir',
  'scope', 'include', 'exclude', 'maxDepth', 'maxPages', 'maxPagesPerGroup', 'attempts', 'backoff', 'userAgent', 'allowPrivateNetwork', 'sortQuery',
  'seenSet', 'expectedUrls', 'falsePositiveRate', 'sitemaps',
  'groupBy', 'rate', 'burst', 'domainConcurrency', 'globalRate', 'safetyMargin', 'leaseTime', 'maxBlocked', 'maxPause', 'stallTimeout',
];

export const WORKER_OPTIONS: readonly OptionName[] = [
  ...CRAWL_OPTIONS,
  'robotsTtl', 'maxCrawlDelay',
  'concurrency', 'out', 'gracePeriod', 'requestTimeout', 'connectTimeout', 'responseTimeout', 'lookupTimeout',
  'fetchRetries', 'fetchBackoff', 'maxBodySize', 'maxRedirects', 'maxSockets', 'maxFreeSockets', 'freeSocketTimeout', 'ignoreRobots',
  'smtpUrl', 'alertFrom', 'alertTo', 'outboxDir', 'alertDelay', 'alertWindow', 'dashboardUrl', 'dlqMaxAge', 'dlqMaxCount',
  ...LOG_OPTIONS, 'statsInterval', 'metricsPort', 'metricsHost',
];

export const ADMIN_OPTIONS: readonly OptionName[] = ['redisUrl', 'namespace', 'stateDir'];

/** Adds the table's flags for `names` to a command, plus `--config FILE`. */
export function addConfigOptions(command: Command, names: readonly OptionName[]): Command {
  command.option('--config <file>', 'JSON config file (flags > environment > file > defaults)');
  for (const name of names) {
    const entry = OPTION_TABLE[name];
    if (entry.flag === undefined) continue;
    const env = entry.env === undefined ? '' : ` [env ${entry.env}]`;
    if (typeof entry.default === 'boolean') {
      command.addOption(new Option(entry.flag, `${entry.doc}${env}`));
    } else if (LIST_OPTIONS.has(name)) {
      command.addOption(
        new Option(`${entry.flag} <value>`, `${entry.doc}${env}`).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
      );
    } else {
      command.addOption(new Option(`${entry.flag} <value>`, `${entry.doc}${env}`));
    }
  }
  return command;
}

/** Parses flags > environment > config file > defaults once; exits 2 on a bad value. */
export function configFrom(flags: Record<string, unknown>, overrides: Partial<Record<OptionName, unknown>> = {}): CrawlqConfig {
  const known: Partial<Record<OptionName, unknown>> = {};
  for (const name of Object.keys(OPTION_TABLE) as OptionName[]) {
    const flag = OPTION_TABLE[name].flag;
    const value = flag === undefined ? undefined : flags[attributeOf(flag)];
    if (value !== undefined) known[name] = value;
  }
  try {
    return loadConfig({
      flags: { ...overrides, ...known },
      env: process.env,
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
