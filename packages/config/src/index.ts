export { loadConfig, type ConfigSources } from './load-config.js';
export { ConfigError } from './errors.js';
export { OPTION_TABLE, limitRuleSchema, fieldRuleSchema, type CrawlqConfig, type OptionName } from './schema.js';
export { parseDurationMs, parseRate, parseBytes, formatRate, formatDuration, type Rate } from './units.js';
