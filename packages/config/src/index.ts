export { loadConfig, type ConfigSources } from './load-config.js';
export { ConfigError } from './errors.js';
export { isPostgresUrl } from './database-url.js';
export { OPTION_SECTIONS, OPTION_SECTION, type OptionSection } from './sections.js';
export { OPTION_TABLE, optionValueKind, limitRuleSchema, fieldRuleSchema, type CrawlqConfig, type OptionName, type OptionScope } from './schema.js';
export { parseDurationMs, parseRate, parseBytes, formatRate, formatDuration, type Rate } from './units.js';
export {
  FLEET_OPTIONS,
  FIXED_FLEET_OPTIONS,
  isFleetOption,
  definitionValuesFrom,
  parseDefinitionValues,
  definitionConflicts,
  mergeDefinition,
  adoptDefinition,
  canonicalJson,
  optionLabel,
  formatOptionValue,
  conflictMessage,
  crawlqCommand,
  type CrawlDefinition,
  type DefinitionValues,
  type DefinitionConflict,
  type CommandContext,
} from './crawl-definition.js';
