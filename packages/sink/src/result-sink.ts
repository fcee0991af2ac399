/** A record a sink accepts: a page or skipped URL, keyed by its normalised URL. */
export interface SinkRecord {
  readonly url: string;
}

/**
 * Where a crawler's item is stored when it is not keyed by its own `url`:
 * the page it came from and its key (the page's URL and the item's index),
 * so a page handled again overwrites its items in PostgreSQL instead of
 * adding them twice. A symbol: JSON (the JSONL line, the jsonb record) leaves it out.
 */
export const SINK_ROW: unique symbol = Symbol.for('crawlq.sinkRow');

/** An item pushed by a crawler's route, with where it is stored. */
export interface SinkItem {
  readonly [SINK_ROW]: { readonly key: string; readonly url: string };
}

/**
 * A continuous crawl's judgement of the page a record holds: its content
 * signature (the same for a redelivery of one version, different for a new
 * one), so a sink can count changes without counting a retried job twice.
 * A symbol: JSON leaves it out.
 */
export const SINK_REVISIT: unique symbol = Symbol.for('crawlq.sinkRevisit');

/** A page record with its revisit judgement attached (see SINK_REVISIT). */
export interface SinkRevisit {
  readonly [SINK_REVISIT]?: { readonly signature: string };
}

/** A revisit that found the page unchanged (a 304, or the same content): no new record, only the time it was checked. */
export interface SinkCheck {
  /** The record's URL (its row's key). */
  readonly url: string;
  /** ISO 8601 time the answer arrived. */
  readonly checkedAt: string;
}

/** Where page records go (a JSONL file, PostgreSQL). */
export interface ResultSink {
  /**
   * Writes one record; resolves once it is durable enough that the job that
   * produced it may complete (handed to the OS for a file, committed for a
   * database). A job must not complete before this resolves.
   */
  write<T extends SinkRecord | SinkItem>(record: T): Promise<void>;
  /**
   * Notes an unchanged revisit of a URL whose record was written before;
   * absent where a sink keeps no such mark (JSONL: an unchanged revisit adds no line).
   */
  checked?(check: SinkCheck): Promise<void>;
  /** Flushes and closes. */
  close(): Promise<void>;
}
