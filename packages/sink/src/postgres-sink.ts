import { isTransientDatabaseError, messageOf, SinkClosedError, SinkWriteError } from './errors.js';
import { redactConnectionUrl, redactText } from '@crawlq/urls';
import { openPool, sleep } from './postgres-pool.js';
import { lastPerKey, toRow, urlFingerprint, type ResultRow } from './postgres-rows.js';
import { RESULTS_TABLE } from './postgres-schema.js';
import type { ResultSink, SinkCheck, SinkItem, SinkRecord } from './result-sink.js';

export interface PostgresSinkOptions {
  readonly url: string;
  readonly namespace: string;
  /** Rows per INSERT. @default 200 */
  readonly batchSize?: number;
  /** How long a lone record waits for company before it is written. @default 20 */
  readonly flushIntervalMs?: number;
  readonly log: (line: string) => void;
  /** How long `close()` keeps retrying held records before giving them back. @default 10000 */
  readonly closeTimeoutMs?: number;
}

/** A record to upsert, or an unchanged revisit to mark on its row. */
type Pending = (
  | { readonly row: ResultRow; readonly check?: undefined }
  | { readonly row?: undefined; readonly check: { readonly urlFp: string; readonly url: string; readonly at: string } }
) & {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;

// unnest() keeps the statement and its plan the same whatever the batch size
// (14 array parameters, not 14 per row). A continuous crawl's page counts a
// change only when its content signature differs from the row's: a job run
// again for the same version (a retry, a redelivery) counts none.
const CHANGED = 'r.content_sig IS NOT NULL AND EXCLUDED.content_sig IS NOT NULL AND r.content_sig <> EXCLUDED.content_sig';
const UPSERT = `
  INSERT INTO ${RESULTS_TABLE} AS r (namespace, url_fp, url, final_url, status, content_type, title, depth, grp, skipped, fetched_at, attempts, record, body, content_sig, changed_at, checked_at)
  SELECT $1, u.*, u.fetched_at, u.fetched_at
    FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::timestamptz[], $12::int[], $13::jsonb[], $14::text[], $15::text[])
      AS u(url_fp, url, final_url, status, content_type, title, depth, grp, skipped, fetched_at, attempts, record, body, content_sig)
  ON CONFLICT (namespace, url_fp) DO UPDATE SET
    url = EXCLUDED.url, final_url = EXCLUDED.final_url, status = EXCLUDED.status, content_type = EXCLUDED.content_type,
    title = EXCLUDED.title, depth = EXCLUDED.depth, grp = EXCLUDED.grp, skipped = EXCLUDED.skipped,
    fetched_at = EXCLUDED.fetched_at, attempts = EXCLUDED.attempts, record = EXCLUDED.record,
    body = COALESCE(EXCLUDED.body, r.body), writes = r.writes + 1, updated_at = now(),
    changes = r.changes + CASE WHEN ${CHANGED} THEN 1 ELSE 0 END,
    changed_at = CASE WHEN ${CHANGED} THEN EXCLUDED.changed_at ELSE COALESCE(r.changed_at, EXCLUDED.changed_at) END,
    checked_at = GREATEST(r.checked_at, EXCLUDED.checked_at),
    content_sig = COALESCE(EXCLUDED.content_sig, r.content_sig)`;

// An unchanged revisit moves checked_at only (never back: a late duplicate keeps the later time).
const CHECK = `
  UPDATE ${RESULTS_TABLE} AS r SET checked_at = GREATEST(r.checked_at, c.at)
    FROM (SELECT url_fp, max(at) AS at FROM unnest($2::text[], $3::timestamptz[]) AS u(url_fp, at) GROUP BY url_fp) AS c
   WHERE r.namespace = $1 AND r.url_fp = c.url_fp`;

/**
 * Writes records to PostgreSQL in batches, one row per URL and namespace.
 * `write()` resolves only once the record's batch is committed, so a job
 * completes after its row exists: a worker killed before that leaves the job
 * to be run again, and the upsert on the URL fingerprint turns the second
 * delivery into an update of the same row. While the database is slow or
 * down, writes wait and retry (never dropped); the jobs waiting on them hold
 * the worker's concurrency slots, which is the backpressure.
 */
export async function openPostgresSink(options: PostgresSinkOptions): Promise<ResultSink & Required<Pick<ResultSink, 'checked'>>> {
  const { url, namespace, log } = options;
  const batchSize = options.batchSize ?? 200;
  const flushIntervalMs = options.flushIntervalMs ?? 20;
  const closing = new AbortController();
  const pool = await openPool({ url, log, applicationName: `crawlq-sink:${process.pid}`, signal: closing.signal });
  const pending: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  let closed = false;
  let giveUp = false;

  const insert = async (items: readonly Pending[]) => {
    const rows = lastPerKey(items.filter((item): item is Pending & { row: ResultRow } => item.row !== undefined)).map((item) => item.row);
    const checks = items.flatMap((item) => (item.check === undefined ? [] : [item.check]));
    // Records first: a check for a URL whose record is in the same batch then finds its row.
    if (rows.length > 0) await upsert(rows);
    if (checks.length > 0) await pool.query(CHECK, [namespace, checks.map((check) => check.urlFp), checks.map((check) => check.at)]);
  };
  const upsert = async (rows: readonly ResultRow[]) => {
    await pool.query(UPSERT, [
      namespace,
      rows.map((row) => row.urlFp),
      rows.map((row) => row.url),
      rows.map((row) => row.finalUrl),
      rows.map((row) => row.status),
      rows.map((row) => row.contentType),
      rows.map((row) => row.title),
      rows.map((row) => row.depth),
      rows.map((row) => row.group),
      rows.map((row) => row.skipped),
      rows.map((row) => row.fetchedAt),
      rows.map((row) => row.attempts),
      rows.map((row) => row.record),
      rows.map((row) => row.body),
      rows.map((row) => row.contentSig),
    ]);
  };

  // Retries a batch until it is stored. A batch the database rejects for its
  // data (not for a connection problem) is split, so one bad record fails
  // only its own job.
  const store = async (items: readonly Pending[]): Promise<void> => {
    let delay = RETRY_MIN_MS;
    let said = '';
    for (;;) {
      try {
        await insert(items);
        if (said !== '') log(`PostgreSQL is writable again; stored ${items.length} held record(s)`);
        for (const item of items) item.resolve();
        return;
      } catch (error) {
        if (!isTransientDatabaseError(error)) {
          if (items.length === 1) {
            items[0]?.reject(new SinkWriteError(items[0].row?.url ?? items[0].check?.url ?? '', error));
            return;
          }
          for (const item of items) await store([item]);
          return;
        }
        if (giveUp) {
          for (const item of items) item.reject(new SinkClosedError());
          return;
        }
        const reason = redactText(messageOf(error), url);
        if (reason !== said) log(`cannot write to PostgreSQL at ${redactConnectionUrl(url)} (${reason}); holding ${items.length} record(s) and retrying`);
        said = reason;
        await sleep(delay, closing.signal);
        delay = Math.min(RETRY_MAX_MS, delay * 2);
      }
    }
  };

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    // One batch in flight at a time; records arriving meanwhile form the next (group commit).
    flushing ??= (async () => {
      while (pending.length > 0) await store(pending.splice(0, batchSize));
    })().finally(() => {
      flushing = undefined;
      if (pending.length > 0) schedule();
    });
    return flushing;
  };

  const schedule = () => {
    if (flushing) return;
    if (pending.length >= batchSize) void flush();
    else timer ??= setTimeout(() => void flush(), flushIntervalMs);
  };

  return {
    write<T extends SinkRecord | SinkItem>(record: T) {
      if (closed) return Promise.reject(new SinkClosedError());
      let row: ResultRow;
      try {
        row = toRow(record);
      } catch (error) {
        return Promise.reject(new SinkWriteError(String((record as Partial<SinkRecord>).url), error));
      }
      return new Promise<void>((resolve, reject) => {
        pending.push({ row, resolve, reject });
        schedule();
      });
    },
    checked(check: SinkCheck) {
      if (closed) return Promise.reject(new SinkClosedError());
      const at = Date.parse(check.checkedAt);
      if (Number.isNaN(at)) return Promise.reject(new SinkWriteError(check.url, new RangeError(`checkedAt is not a time: ${check.checkedAt}`)));
      return new Promise<void>((resolve, reject) => {
        pending.push({ check: { urlFp: urlFingerprint(check.url), url: check.url, at: new Date(at).toISOString() }, resolve, reject });
        schedule();
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const deadline = setTimeout(() => {
        // Records still held belong to jobs that never completed: they run again elsewhere.
        giveUp = true;
        closing.abort();
      }, options.closeTimeoutMs ?? 10_000);
      try {
        while (pending.length > 0 || flushing) await flush();
      } finally {
        clearTimeout(deadline);
        await pool.end().catch(() => undefined);
      }
    },
  };
}
