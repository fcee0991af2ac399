import type { Pool } from 'pg';

/** The table every namespace shares; a namespace column keeps crawls apart. */
export const RESULTS_TABLE = 'crawlq_results';

// Each entry runs once, in order, in one transaction with its version row.
// Append new versions; never edit one that has shipped.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ${RESULTS_TABLE} (
     namespace text NOT NULL,
     url_fp text NOT NULL,
     url text NOT NULL,
     final_url text,
     status integer,
     content_type text,
     title text,
     depth integer,
     grp text,
     skipped text,
     fetched_at timestamptz,
     attempts integer,
     record jsonb NOT NULL,
     body text,
     writes integer NOT NULL DEFAULT 1,
     first_written_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (namespace, url_fp)
   );
   CREATE INDEX ${RESULTS_TABLE}_status ON ${RESULTS_TABLE} (namespace, status)`,
  // Continuous crawls: when a page's content last changed, when it was last
  // fetched (304s included), how often it changed, and the content signature
  // that tells a change from a redelivery. No default to fill in and no
  // rewrite: adding them is instant on a large table; rows written before stay NULL until their next write.
  `ALTER TABLE ${RESULTS_TABLE} ADD COLUMN IF NOT EXISTS changed_at timestamptz;
   ALTER TABLE ${RESULTS_TABLE} ADD COLUMN IF NOT EXISTS checked_at timestamptz;
   ALTER TABLE ${RESULTS_TABLE} ADD COLUMN IF NOT EXISTS changes integer NOT NULL DEFAULT 0;
   ALTER TABLE ${RESULTS_TABLE} ADD COLUMN IF NOT EXISTS content_sig text`,
];

/** Any constant: serialises schema changes when several workers start at once. */
const MIGRATION_LOCK = 0x6372_776c;

/** Creates or upgrades the schema; safe to run from many processes at once. */
export async function migrate(pool: Pool): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS crawlq_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM crawlq_schema_migrations');
    const applied = rows[0]?.version ?? 0;
    for (let version = applied + 1; version <= MIGRATIONS.length; version += 1) {
      await client.query(MIGRATIONS[version - 1] ?? '');
      await client.query('INSERT INTO crawlq_schema_migrations (version) VALUES ($1)', [version]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    // A connection that failed mid-transaction is dropped, not pooled.
    client.release(broken);
  }
}
