import type { z } from 'zod';
import { checkFleetValues } from './load-config.js';
import { ConfigError } from './errors.js';
import { deepFreeze } from './freeze.js';
import { OPTION_TABLE, optionValueKind, type CrawlqConfig, type OptionName } from './schema.js';
import { formatDuration, formatRate, type Rate } from './units.js';

/**
 * The fleet-wide part of a configuration: every option whose table entry has
 * `scope: 'fleet'`. One per namespace, stored in Redis; every process adopts it.
 */
export const FLEET_OPTIONS: readonly OptionName[] = Object.freeze(
  (Object.keys(OPTION_TABLE) as OptionName[]).filter((name) => OPTION_TABLE[name].scope === 'fleet'),
);

/** Fleet options that cannot change once a crawl has state: the seen-set's layout depends on them. */
export const FIXED_FLEET_OPTIONS: readonly OptionName[] = Object.freeze(['seenSet', 'expectedUrls', 'falsePositiveRate', 'shards'] as const);

/**
 * Fleet options that cannot change in a crawl of more than one shard: a URL's
 * group picks its shard, seen-set slice included, so a URL regrouped later
 * would be looked up in another slice (and fetched again).
 */
const FIXED_WHEN_SHARDED: readonly OptionName[] = Object.freeze(['groupBy', 'groupRules'] as const);

/** Values of the fleet options, validated like any config value. Unset optional values are absent. */
export type DefinitionValues = Readonly<Partial<Record<OptionName, unknown>>>;

/** The crawl definition in force for a namespace. */
export interface CrawlDefinition {
  /** Grows by one on every change; workers compare it to notice changes cheaply. */
  readonly version: number;
  /** Who stored this version: command and host:pid. */
  readonly setBy: string;
  /** When (ISO time, Redis clock). */
  readonly setAt: string;
  readonly values: DefinitionValues;
}

/** A fleet option a process was given that differs from the definition in force. */
export interface DefinitionConflict {
  readonly option: OptionName;
  readonly given: unknown;
  readonly fleet: unknown;
}

export function isFleetOption(name: OptionName): boolean {
  return OPTION_TABLE[name].scope === 'fleet';
}

/** The fleet options of a config (explicit or default), as a definition's values. */
export function definitionValuesFrom(config: CrawlqConfig): DefinitionValues {
  const values: Partial<Record<OptionName, unknown>> = {};
  for (const name of FLEET_OPTIONS) if (config[name] !== undefined) values[name] = config[name];
  return Object.freeze(values);
}

/**
 * Validates stored values with the option table's schemas. A missing option
 * takes its default (a definition written before the option existed); an
 * unknown one is ignored (written by a newer crawlq).
 * @throws ConfigError naming the stored option that is malformed
 */
export function parseDefinitionValues(input: unknown): DefinitionValues {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigError('crawl definition', 'the stored definition is not a JSON object');
  }
  const stored = input as Record<string, unknown>;
  const values: Partial<Record<OptionName, unknown>> = {};
  for (const name of FLEET_OPTIONS) {
    const raw = stored[name];
    if (raw === undefined) {
      if (OPTION_TABLE[name].default !== undefined) values[name] = OPTION_TABLE[name].default;
      continue;
    }
    const parsed = (OPTION_TABLE[name].schema as z.ZodType).safeParse(raw);
    if (!parsed.success) throw new ConfigError(`crawl definition: ${name}`, parsed.error.issues[0]?.message ?? 'invalid value');
    if (parsed.data !== undefined) values[name] = parsed.data;
  }
  return Object.freeze(values);
}

/** Canonical JSON (sorted keys at every level): equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * The fleet options this process was given explicitly (flag, environment or
 * config file) whose value differs from the definition's. A process given the
 * definition's own value does not conflict.
 */
export function definitionConflicts(config: CrawlqConfig, values: DefinitionValues): DefinitionConflict[] {
  return config.explicit
    .filter((name) => isFleetOption(name) && !sameValue(config[name], values[name]))
    .map((name) => ({ option: name, given: config[name], fleet: values[name] }));
}

/**
 * A definition with this process's explicit fleet options laid over `base`,
 * and the options that changed. Without a base, the process's whole fleet
 * configuration (explicit and defaults) is the definition.
 * @throws ConfigError when a change would touch an option fixed for the crawl's lifetime
 */
export function mergeDefinition(base: DefinitionValues | null, config: CrawlqConfig): { values: DefinitionValues; changed: OptionName[] } {
  if (base === null) return { values: definitionValuesFrom(config), changed: [] };
  const values: Partial<Record<OptionName, unknown>> = { ...base };
  const changed: OptionName[] = [];
  for (const name of config.explicit) {
    if (!isFleetOption(name) || sameValue(config[name], base[name])) continue;
    if (FIXED_FLEET_OPTIONS.includes(name)) {
      throw new ConfigError(
        optionLabel(name),
        `cannot change while the crawl has state (the fleet's seen-set uses ${formatOptionValue(name, base[name])}); start a fresh crawl or use another --namespace`,
      );
    }
    if (FIXED_WHEN_SHARDED.includes(name) && typeof base.shards === 'number' && base.shards > 1) {
      throw new ConfigError(
        optionLabel(name),
        `cannot change in a crawl of ${base.shards} shards (a URL's group picks its shard and seen-set slice); start a fresh crawl or use another --namespace`,
      );
    }
    if (config[name] === undefined) delete values[name];
    else values[name] = config[name];
    changed.push(name);
  }
  checkFleetValues(values);
  return { values: Object.freeze(values), changed };
}

/** `config` with every fleet option taken from the definition; process options untouched. Frozen. */
export function adoptDefinition(config: CrawlqConfig, values: DefinitionValues): CrawlqConfig {
  const adopted: Record<string, unknown> = { ...config };
  for (const name of FLEET_OPTIONS) adopted[name] = values[name];
  adopted.explicit = config.explicit.filter((name) => !isFleetOption(name));
  return deepFreeze(adopted) as CrawlqConfig;
}

/** How a user names an option: its flag, else its config-file key. */
export function optionLabel(name: OptionName): string {
  return OPTION_TABLE[name].flag ?? name;
}

/** A value spelled the way the option's flag takes it (`5/1s`, `30s`, `a,b`), or JSON for config-file-only options. */
export function formatOptionValue(name: OptionName, value: unknown): string {
  if (value === undefined) return 'unset';
  const kind = optionValueKind(name);
  if (kind === 'rate') return value === null ? 'none' : formatRate(value as Rate);
  if (kind === 'duration' && typeof value === 'number') return formatDuration(value);
  if (OPTION_TABLE[name].flag === undefined) return canonicalJson(value);
  if (value === null) return 'none';
  if (name === 'serverRate' && typeof value === 'object') return formatRate(value as Rate);
  if (Array.isArray(value)) return value.length === 0 ? '""' : value.map(String).join(',');
  if (typeof value === 'string') return value;
  return canonicalJson(value);
}

/**
 * A crawlq command line to print as a hint: with `--namespace` when the crawl
 * is not in the default one, so the hint acts on the crawl it is about.
 */
export function crawlqCommand(words: string, namespace: string, prefix = 'crawlq'): string {
  // Last: `--namespace` belongs to the innermost (sub)command.
  return namespace === OPTION_TABLE.namespace.default ? `${prefix} ${words}` : `${prefix} ${words} --namespace ${shellWord(namespace)}`;
}

/** What a hint's command line says besides its words: the crawl's namespace, and how the operator runs crawlq. */
export interface CommandContext {
  /** @default the default namespace (no `--namespace` in the hint) */
  readonly namespace?: string;
  /** `crawlq`, `pnpm crawlq`...: only the app knows how it was invoked. @default 'crawlq' */
  readonly cli?: string;
}

/** The one-line refusal a process prints when it was given a value the fleet does not use. */
export function conflictMessage(conflict: DefinitionConflict, version: number, context: CommandContext = {}): string {
  const { option, given, fleet } = conflict;
  const label = optionLabel(option);
  const command = (words: string) => crawlqCommand(words, context.namespace ?? OPTION_TABLE.namespace.default, context.cli);
  const how =
    OPTION_TABLE[option].flag === undefined
      ? `${command('config set --config FILE')} (with "${option}" in FILE)`
      : command(`config set ${label} ${shellWord(formatOptionValue(option, given))}`);
  return `${label}: this process was given ${formatOptionValue(option, given)}, but the fleet's crawl definition (version ${version}) has ${formatOptionValue(option, fleet)}; start it without ${label} to follow the fleet, or change the fleet's with \`${how}\``;
}

function shellWord(text: string): string {
  return /^[\w./:@%+,=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
