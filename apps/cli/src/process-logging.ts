import { hostname } from 'node:os';
import type { CrawlqConfig } from '@crawlq/config';
import { createLogger, type Logger, type LogStream } from '@crawlq/logging';

/**
 * The `worker` field of this process's log lines: `worker-N` for a worker
 * that `crawl` spawned, else the host name (a pod's name under Kubernetes).
 */
export function workerName(): string {
  const index = process.env.CRAWLQ_WORKER_INDEX;
  return index === undefined ? hostname() : `worker-${index}`;
}

/** A logger configured by --log-level and --log-format. */
export function processLogger(config: CrawlqConfig, worker: string, output: { readonly stream?: LogStream } = {}): Logger {
  const { stream } = output;
  return createLogger({ level: config.logLevel, format: config.logFormat, worker, namespace: config.namespace, ...(stream ? { stream } : {}) });
}

/** Workers that `crawl` spawns share one --metrics-port: worker N listens on PORT+N (0 stays "any free port"). */
export function metricsPortOf(config: CrawlqConfig): number | undefined {
  const index = Number(process.env.CRAWLQ_WORKER_INDEX ?? 0);
  if (config.metricsPort === undefined) return undefined;
  return config.metricsPort === 0 ? 0 : config.metricsPort + index;
}
