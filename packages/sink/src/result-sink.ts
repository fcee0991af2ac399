/** A record a sink accepts: a page or skipped URL, keyed by its normalised URL. */
export interface SinkRecord {
  readonly url: string;
}

/** Where page records go (a JSONL file, PostgreSQL). */
export interface ResultSink {
  /**
   * Writes one record; resolves once it is durable enough that the job that
   * produced it may complete (handed to the OS for a file, committed for a
   * database). A job must not complete before this resolves.
   */
  write<T extends SinkRecord>(record: T): Promise<void>;
  /** Flushes and closes. */
  close(): Promise<void>;
}
