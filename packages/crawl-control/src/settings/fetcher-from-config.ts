import type { CrawlqConfig } from '@crawlq/config';
import type { FetcherOptions } from '@crawlq/fetcher';

/** Fetcher settings a config describes. */
export function fetcherOptionsFrom(config: CrawlqConfig): FetcherOptions {
  return {
    userAgent: config.userAgent,
    agent: {
      maxSockets: config.maxSockets,
      maxFreeSockets: config.maxFreeSockets,
      freeSocketTimeoutMs: config.freeSocketTimeout,
    },
    timeouts: {
      lookupMs: config.lookupTimeout,
      connectMs: config.connectTimeout,
      responseMs: config.responseTimeout,
      requestMs: config.requestTimeout,
    },
    retry: {
      limit: config.fetchRetries,
      backoffBaseMs: config.fetchBackoff,
      backoffMaxMs: Math.max(config.fetchBackoff, 10_000),
      // A Retry-After pauses the whole group through the gate rather than
      // holding a worker slot while other workers keep hitting the host.
      maxRetryAfterMs: 0,
    },
    maxBodyBytes: config.maxBodySize,
    maxRedirects: config.maxRedirects,
    allowPrivateNetwork: config.allowPrivateNetwork,
  };
}
