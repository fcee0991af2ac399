import type pg from 'pg';
import { openPool } from './postgres-pool.js';
import { RESULTS_TABLE } from './postgres-schema.js';

/** What `crawlq results stats` prints. */
export interface ResultsStats {
  readonly namespace: string;
  /** Rows: one per URL. */
  readonly rows: number;
  /** Rows of fetched pages (not skipped). */
  readonly pages: number;
  readonly skipped: number;
  /** Rows written more than once (a retried or re-delivered job updated its row). */
  readonly rewritten: number;
  readonly groups: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly firstFetchedAt: string | null;
  readonly lastFetchedAt: string | null;
  /** Rows whose page changed at least once after its first fetch (a continuous crawl; 0 otherwise). */
  readonly changedPages: number;
  /** Changes seen over all rows: each revisit that found new content counts one. */
  readonly changes: number;
  /** The latest change seen (a first fetch counts as one), and the latest time a revisit found a page as it was. */
  readonly lastChangedAt: string | null;
  readonly lastCheckedAt: string | null;
}

/** One stored record, as written (plus `body` when it was kept). */
export type StoredRecord = Record<string, unknown> & { readonly url: string };

/** Reads a namespace's results back from PostgreSQL. */
export interface ResultsStore {
  /** Every record of the namespace, in fingerprint order, fetched a page at a time. */
  records(namespace: string, pageSize?: number): AsyncGenerator<StoredRecord>;
  stats(namespace: string): Promise<ResultsStats>;
  close(): Promise<void>;
}

/** Admin commands wait for the database a short while, not forever as workers do. */
export async function openResultsStore(options: { url: string; log: (line: string) => void; waitMs?: number }): Promise<ResultsStore> {
  const pool: pg.Pool = await openPool({ url: options.url, log: options.log, applicationName: 'crawlq-results', waitMs: options.waitMs ?? 15_000 });
  return {
    async *records(namespace, pageSize = 1_000) {
      // Keyset pagination: constant memory, no cursor held open across pages.
      let after = '';
      for (;;) {
        const { rows } = await pool.query<{ url_fp: string; record: StoredRecord; body: string | null }>(
          `SELECT url_fp, record, body FROM ${RESULTS_TABLE} WHERE namespace = $1 AND url_fp > $2 ORDER BY url_fp LIMIT $3`,
          [namespace, after, pageSize],
        );
        for (const row of rows) yield row.body === null ? row.record : { ...row.record, body: row.body };
        const last = rows.at(-1);
        if (!last || rows.length < pageSize) return;
        after = last.url_fp;
      }
    },
    async stats(namespace) {
      const { rows } = await pool.query<{
        rows: string;
        pages: string;
        skipped: string;
        rewritten: string;
        groups: string;
        first: Date | null;
        last: Date | null;
        changed_pages: string;
        changes: string | null;
        last_changed: Date | null;
        last_checked: Date | null;
      }>(
        `SELECT count(*) AS rows, count(*) FILTER (WHERE skipped IS NULL) AS pages, count(*) FILTER (WHERE skipped IS NOT NULL) AS skipped,
                count(*) FILTER (WHERE writes > 1) AS rewritten, count(DISTINCT grp) AS groups, min(fetched_at) AS first, max(fetched_at) AS last,
                count(*) FILTER (WHERE changes > 0) AS changed_pages, sum(changes) AS changes, max(changed_at) AS last_changed, max(checked_at) AS last_checked
           FROM ${RESULTS_TABLE} WHERE namespace = $1`,
        [namespace],
      );
      const statuses = await pool.query<{ status: number; count: string }>(
        `SELECT status, count(*) AS count FROM ${RESULTS_TABLE} WHERE namespace = $1 AND status IS NOT NULL AND skipped IS NULL GROUP BY status ORDER BY status`,
        [namespace],
      );
      const totals = rows[0];
      return {
        namespace,
        rows: Number(totals?.rows ?? 0),
        pages: Number(totals?.pages ?? 0),
        skipped: Number(totals?.skipped ?? 0),
        rewritten: Number(totals?.rewritten ?? 0),
        groups: Number(totals?.groups ?? 0),
        byStatus: Object.fromEntries(statuses.rows.map((row) => [String(row.status), Number(row.count)])),
        firstFetchedAt: totals?.first?.toISOString() ?? null,
        lastFetchedAt: totals?.last?.toISOString() ?? null,
        changedPages: Number(totals?.changed_pages ?? 0),
        changes: Number(totals?.changes ?? 0),
        lastChangedAt: totals?.last_changed?.toISOString() ?? null,
        lastCheckedAt: totals?.last_checked?.toISOString() ?? null,
      };
    },
    async close() {
      await pool.end();
    },
  };
}
