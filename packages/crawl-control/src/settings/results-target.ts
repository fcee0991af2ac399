import type { CrawlqConfig } from '@crawlq/config';
import { sinkTargetOf, type SinkTarget } from '@crawlq/sink';
import { redactConnectionUrl } from '@crawlq/urls';

/** Where this configuration sends page records. */
export function resultsTargetOf(config: CrawlqConfig): SinkTarget {
  return sinkTargetOf({ out: config.out, sink: config.sink, databaseUrl: config.databaseUrl });
}

/** The results target for logs and summaries, password hidden. */
export function describeResults(config: CrawlqConfig): string {
  const target = resultsTargetOf(config);
  return target.kind === 'jsonl' ? target.path : `PostgreSQL ${redactConnectionUrl(target.url)} (namespace ${config.namespace})`;
}
