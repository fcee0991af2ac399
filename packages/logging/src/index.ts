export { createLogger, lineLogger, resolveFormat, LOG_LEVELS, LOG_FORMATS, type Logger, type LoggerOptions, type LogLevel, type LogFormat, type LogStream } from './create-logger.js';
export { formatPrettyLine } from './pretty-line.js';
export { colorEnabled, colors, type Colors } from './color.js';
export { startStatsLine, formatStatsLine, type StatsSnapshot, type StatsLineOptions } from './stats-line.js';
