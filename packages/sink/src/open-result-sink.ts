import { isPostgresUrl } from '@crawlq/config';
import { openJsonlSink } from './jsonl-sink.js';
import { openPostgresSink } from './postgres-sink.js';
import type { ResultSink } from './result-sink.js';

/** Where records go, decided once from the options. */
export type SinkTarget = { readonly kind: 'jsonl'; readonly path: string } | { readonly kind: 'postgres'; readonly url: string };

export interface SinkSettings {
  readonly out: string;
  readonly sink?: 'jsonl' | 'postgres' | undefined;
  readonly databaseUrl?: string | undefined;
}

/** `--out postgres://...` or a database URL means PostgreSQL unless `--sink jsonl` says otherwise. */
export function sinkTargetOf(settings: SinkSettings): SinkTarget {
  if (isPostgresUrl(settings.out)) return { kind: 'postgres', url: settings.out };
  if (settings.sink !== 'jsonl' && settings.databaseUrl !== undefined) return { kind: 'postgres', url: settings.databaseUrl };
  return { kind: 'jsonl', path: settings.out };
}

export interface OpenSinkOptions {
  readonly namespace: string;
  readonly batchSize: number;
  readonly log: (line: string) => void;
}

/** Opens the sink a target names; PostgreSQL is waited for while unreachable. */
export async function openResultSink(target: SinkTarget, options: OpenSinkOptions): Promise<ResultSink> {
  switch (target.kind) {
    case 'jsonl':
      return openJsonlSink(target.path);
    case 'postgres':
      return openPostgresSink({ url: target.url, namespace: options.namespace, batchSize: options.batchSize, log: options.log });
  }
}
