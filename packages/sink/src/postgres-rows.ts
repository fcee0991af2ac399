import { createHash } from 'node:crypto';
import { SINK_REVISIT, SINK_ROW, type SinkItem, type SinkRecord, type SinkRevisit } from './result-sink.js';

/** One record as the columns of the results table. */
export interface ResultRow {
  readonly urlFp: string;
  readonly url: string;
  readonly finalUrl: string | null;
  readonly status: number | null;
  readonly contentType: string | null;
  readonly title: string | null;
  readonly depth: number | null;
  readonly group: string | null;
  readonly skipped: string | null;
  readonly fetchedAt: string | null;
  readonly attempts: number | null;
  /** The whole record but `body`, as JSON. */
  readonly record: string;
  readonly body: string | null;
  /** A continuous crawl's content signature of the page (see SINK_REVISIT); null otherwise. */
  readonly contentSig: string | null;
}

/**
 * The row key: SHA-256 of the normalised URL, 128 bits in hex. Every delivery
 * of one URL's job carries the same URL, so a retried or re-delivered job
 * lands on the same row.
 */
export function urlFingerprint(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 32);
}

/** PostgreSQL text and jsonb cannot hold U+0000; a page title can. */
function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

export function toRow(record: SinkRecord | SinkItem): ResultRow {
  const { body, ...rest } = record as SinkRecord & { readonly body?: unknown };
  const json = JSON.stringify(rest, withoutNul);
  const clean = JSON.parse(json) as Record<string, unknown>;
  // A crawler's item: keyed by its page and index, whatever fields it has.
  const item = (record as Partial<SinkItem>)[SINK_ROW];
  const url = item?.url ?? String(clean.url);
  return {
    urlFp: urlFingerprint(item?.key ?? (record as SinkRecord).url),
    url,
    finalUrl: text(clean.finalUrl),
    status: int(clean.status),
    contentType: text(clean.contentType),
    title: text(clean.title),
    depth: int(clean.depth),
    group: text(clean.group),
    skipped: text(clean.skipped),
    fetchedAt: text(clean.fetchedAt) ?? text(clean.decidedAt),
    attempts: int(clean.attempts),
    record: json,
    body: typeof body === 'string' ? body.replaceAll('\0', '\uFFFD') : null,
    contentSig: (record as SinkRevisit)[SINK_REVISIT]?.signature ?? null,
  };
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function int(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

/** Last one wins: one statement may not upsert the same key twice. */
export function lastPerKey<T extends { readonly row: ResultRow }>(items: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    byKey.delete(item.row.urlFp);
    byKey.set(item.row.urlFp, item);
  }
  return [...byKey.values()];
}
