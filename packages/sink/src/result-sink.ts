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

/** Where page records go (a JSONL file, PostgreSQL). */
export interface ResultSink {
  /**
   * Writes one record; resolves once it is durable enough that the job that
   * produced it may complete (handed to the OS for a file, committed for a
   * database). A job must not complete before this resolves.
   */
  write<T extends SinkRecord | SinkItem>(record: T): Promise<void>;
  /** Flushes and closes. */
  close(): Promise<void>;
}
