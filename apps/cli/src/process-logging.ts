import type { CrawlqConfig } from '@crawlq/config';
import { createLogger, type Logger, type LogStream } from '@crawlq/logging';

/** A logger configured by --log-level and --log-format. */
export function processLogger(config: CrawlqConfig, worker: string, output: { readonly stream?: LogStream } = {}): Logger {
  const { stream } = output;
  return createLogger({ level: config.logLevel, format: config.logFormat, worker, namespace: config.namespace, ...(stream ? { stream } : {}) });
}
