import { readFileSync } from 'node:fs';
import { redactConnectionUrl, redactText } from '@crawlq/urls';
import type { z } from 'zod';
import { isPostgresUrl } from './database-url.js';
import { ConfigError } from './errors.js';
import { deepFreeze } from './freeze.js';
import { OPTION_TABLE, optionValueKind, type CrawlqConfig, type OptionName } from './schema.js';
import { formatDuration, formatRate } from './units.js';

/** Where configuration values come from; later sources override earlier ones. */
export interface ConfigSources {
  /** Parsed command-line flags, keyed by option name (undefined = not given). */
  readonly flags?: Readonly<Partial<Record<OptionName, unknown>>>;
  /** Environment variables; pass `process.env` from the app. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Path of a JSON config file (`--config`, or `CRAWLQ_CONFIG` in env). */
  readonly configFile?: string | undefined;
}

const OPTION_NAMES = Object.keys(OPTION_TABLE) as OptionName[];

/**
 * Merges flags > environment > config file > defaults, validates every value
 * once and returns a deeply frozen config. Throws ConfigError naming the
 * offending option the way the user spelled it.
 */
export function loadConfig(sources: ConfigSources = {}): CrawlqConfig {
  const env = sources.env ?? {};
  const filePath = sources.configFile ?? nonEmpty(env.CRAWLQ_CONFIG);
  const fileValues = filePath === undefined ? {} : readConfigFile(filePath);

  const result: Record<string, unknown> = {};
  const explicit: OptionName[] = [];
  for (const name of OPTION_NAMES) {
    const option = OPTION_TABLE[name];
    const candidates: [string, unknown][] = [
      [option.flag ?? name, sources.flags?.[name]],
      [option.env ?? name, option.env === undefined ? undefined : nonEmpty(env[option.env])],
      [`${filePath ?? 'config file'}: ${name}`, fileValues[name]],
    ];
    const given = candidates.find(([, value]) => value !== undefined);
    if (given === undefined) {
      result[name] = option.default;
      continue;
    }
    explicit.push(name);
    const parsed = (option.schema as z.ZodType).safeParse(given[1]);
    if (!parsed.success) {
      throw new ConfigError(given[0], describe(parsed.error, name, given[1]));
    }
    result[name] = parsed.data;
  }
  checkSink(result);
  checkFleetValues(result);
  if (result.redisSeeds !== undefined && result.redisUrl === undefined) {
    throw new ConfigError('--redis-seeds', 'needs --redis-url (or REDIS_URL): the seeds are more nodes of the cluster it names');
  }
  result.explicit = explicit;
  return deepFreeze(result) as CrawlqConfig;
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('--config', `cannot read ${path}`, { cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError('--config', `${path} is not valid JSON (${(error as Error).message})`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError('--config', `${path} must hold a JSON object`);
  }
  const unknownKeys = Object.keys(value).filter((key) => !(key in OPTION_TABLE));
  if (unknownKeys.length > 0) {
    throw new ConfigError('--config', `${path}: unknown option ${unknownKeys.map((key) => `"${key}"`).join(', ')}`);
  }
  return value as Record<string, unknown>;
}

function describe(error: z.ZodError, name: OptionName, value: unknown): string {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  // A rejected URL may carry a password, however mistyped (`redis//:p/w@host`): all before its last @ is masked.
  const shown = typeof value === 'string' && optionValueKind(name) === 'url' ? JSON.stringify(redactConnectionUrl(value)) : redactText(JSON.stringify(value) ?? 'undefined');
  return `${issue?.message ?? 'invalid value'}${where} (got ${shown})`;
}

/** The results sink's options must agree with each other. */
function checkSink(config: Record<string, unknown>): void {
  const out = String(config.out);
  if (config.sink === 'postgres' && config.databaseUrl === undefined && !isPostgresUrl(out)) {
    throw new ConfigError('--sink', 'postgres needs --database-url (or --out postgres://...)');
  }
  if (config.sink === 'jsonl' && isPostgresUrl(out)) {
    throw new ConfigError('--out', 'a postgres:// URL needs --sink postgres (or no --sink)');
  }
}

/** The fleet-wide options that must agree with each other: checked on every config and on every crawl definition. */
export function checkFleetValues(values: Readonly<Record<string, unknown>>): void {
  checkShards(values);
  checkLeaseTime(values);
  checkRevisitBounds(values);
}

/** An adaptive interval lives between its bounds: the bounds the other way round leave it nowhere. */
function checkRevisitBounds(values: Readonly<Record<string, unknown>>): void {
  const { revisitMin, revisitMax } = values as { revisitMin?: unknown; revisitMax?: unknown };
  if (typeof revisitMin !== 'number' || typeof revisitMax !== 'number' || revisitMin <= revisitMax) return;
  throw new ConfigError('--revisit-min', `${formatDuration(revisitMin)} is longer than --revisit-max ${formatDuration(revisitMax)}: give a minimum at most the maximum`);
}

/**
 * A concurrency slot is a lease: one shorter than a request would hand the
 * slot to another request while the first is still running, and the group
 * would see more requests at once than --domain-concurrency allows.
 */
function checkLeaseTime(values: Readonly<Record<string, unknown>>): void {
  const { leaseTime, requestTimeout } = values as { leaseTime?: unknown; requestTimeout?: unknown };
  if (typeof leaseTime !== 'number' || typeof requestTimeout !== 'number' || leaseTime >= requestTimeout) return;
  throw new ConfigError(
    '--lease-time',
    `${formatDuration(leaseTime)} is shorter than --request-timeout ${formatDuration(requestTimeout)}: a concurrency slot would come back while its request may still run; give at least ${formatDuration(requestTimeout)}, or a shorter --request-timeout`,
  );
}

/**
 * A sharded crawl splits --global-rate into whole shares, one per shard (a
 * shard's scripts see only its own keys): the cap needs a start per shard.
 */
function checkShards(values: Readonly<Record<string, unknown>>): void {
  const { shards, globalRate } = values as { shards?: unknown; globalRate?: { max: number; durationMs: number } | null };
  if (typeof shards !== 'number' || shards <= 1 || globalRate === undefined || globalRate === null) return;
  if (globalRate.max < shards) {
    throw new ConfigError('--global-rate', `${formatRate(globalRate)} is fewer starts than --shards ${shards}: each shard paces a whole share of the cap, so give at least ${shards} starts per period (e.g. ${formatRate({ max: shards, durationMs: Math.ceil((globalRate.durationMs * shards) / globalRate.max) })}) or fewer shards`);
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
