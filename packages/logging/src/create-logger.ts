import { redactOutput } from '@crawlq/urls';
import { pino, stdTimeFunctions, type DestinationStream, type Logger } from 'pino';
import { colorEnabled } from './color.js';
import { formatPrettyLine } from './pretty-line.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** `auto`: JSON lines unless the stream is a terminal. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Where log lines go: process.stderr by default; tests pass their own. */
export interface LogStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface LoggerOptions {
  /** @default 'info' */
  readonly level?: LogLevel;
  /** @default 'auto' */
  readonly format?: LogFormat;
  /** Which process is talking: `worker-0`, `crawl`, `dashboard`, a host:pid. */
  readonly worker: string;
  readonly namespace: string;
  /** @default process.stderr */
  readonly stream?: LogStream;
  /**
   * Colour the level and time of pretty lines.
   * @default a terminal without NO_COLOR (`colorEnabled(stream)`)
   */
  readonly color?: boolean;
}

export type { Logger };

/**
 * A pino logger whose lines carry `time` (ISO 8601), `level` (a name, not
 * pino's number), `msg`, `pid`, `worker` and `namespace`. Writes are
 * synchronous: a worker that exits right after logging must not lose the line.
 */
export function createLogger(options: LoggerOptions): Logger {
  const stream = options.stream ?? process.stderr;
  const format = resolveFormat(options.format ?? 'auto', stream);
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid, worker: options.worker, namespace: options.namespace },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Credentials never reach a log line, whichever field they ride in.
      redact: { paths: ['password', '*.password', 'authorization', '*.authorization', 'cookie', '*.cookie'], censor: '[redacted]' },
    },
    destination(stream, format, options.color ?? colorEnabled(stream)),
  );
}

export function resolveFormat(format: LogFormat, stream: LogStream): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return stream.isTTY === true ? 'pretty' : 'json';
}

function destination(stream: LogStream, format: 'json' | 'pretty', color: boolean): DestinationStream {
  if (format === 'json') {
    // process.stderr is synchronous for files and pipes in Node, so each line
    // is out before a following process.exit.
    // Credentials in a message (a URL with a password) are masked string by string, the line stays JSON.
    return { write: (line: string) => void stream.write(redactOutput(line)) };
  }
  return {
    write(line: string) {
      stream.write(redactOutput(formatPrettyLine(line, color)));
    },
  };
}

/** Adapts a logger to the `(line, level)` callbacks the crawl packages take. */
export function lineLogger(logger: Logger): (line: string, level?: 'debug' | 'info' | 'warn' | 'error') => void {
  return (line, level = 'info') => logger[level](line);
}
