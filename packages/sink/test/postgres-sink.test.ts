import { startTestPostgres, type TestPostgres } from '@crawlq/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseConfigError, openPostgresSink, openResultsStore, RESULTS_TABLE, SINK_REVISIT, SinkWriteError, urlFingerprint } from '../src/index.js';

let server: TestPostgres;
let admin: pg.Pool;

beforeAll(async () => {
  server = await startTestPostgres();
  admin = new pg.Pool({ connectionString: server.url, max: 1 });
  admin.on('error', () => undefined); // The server is crashed on purpose below.
});
afterAll(async () => {
  await admin.end();
  await server.stop();
});

interface StoredRow {
  url: string;
  url_fp: string;
  writes: number;
  status: number | null;
  title: string | null;
  body: string | null;
  record: Record<string, unknown>;
}

async function rows(namespace: string): Promise<StoredRow[]> {
  const result = await admin.query<StoredRow>(`SELECT url, url_fp, writes, status, title, body, record FROM ${RESULTS_TABLE} WHERE namespace = $1 ORDER BY url`, [namespace]);
  return result.rows;
}

function page(i: number, extra: Record<string, unknown> = {}) {
  return { url: `http://a.test/${i}`, finalUrl: `http://a.test/${i}`, status: 200, contentType: 'text/html', title: `t${i}`, depth: 1, group: 'a.test', fetchedAt: new Date().toISOString(), attempts: 1, links: [`http://a.test/${i + 1}`], ...extra };
}

describe('openPostgresSink', () => {
  it('creates its schema, writes one row per URL, and a second delivery updates the same row', async () => {
    const logs: string[] = [];
    const sink = await openPostgresSink({ url: server.url, namespace: 'one', batchSize: 7, log: (line) => logs.push(line) });
    await Promise.all(Array.from({ length: 50 }, (_, i) => sink.write(page(i))));
    // A re-delivered job, and a duplicate inside one batch.
    await Promise.all([sink.write(page(3, { attempts: 2, title: 'second' })), sink.write(page(3, { attempts: 3, title: 'third' }))]);
    await sink.close();
    const stored = await rows('one');
    expect(stored).toHaveLength(50);
    const three = stored.find((row) => row.url === 'http://a.test/3');
    expect(three?.title).toBe('third');
    expect(three?.writes).toBeGreaterThanOrEqual(2);
    expect(three?.url_fp).toBe(urlFingerprint('http://a.test/3'));
    expect(three?.record.links).toEqual(['http://a.test/4']);
    // A second sink on the same database finds the schema in place.
    const again = await openPostgresSink({ url: server.url, namespace: 'two', log: (line) => logs.push(line) });
    await again.write({ url: 'http://b.test/', skipped: 'robots', decidedAt: new Date().toISOString(), title: 'nul \0 inside', body: '<p>kept</p>' });
    await again.close();
    const other = await rows('two');
    expect(other).toHaveLength(1);
    expect(other[0]?.title).toBe('nul \uFFFD inside');
    expect(other[0]?.body).toBe('<p>kept</p>');
    expect(other[0]?.record.body).toBeUndefined();
    expect(logs).toEqual([]);
  });

  it('a continuous crawl upserts a page once: changed_at and changes move on a new signature only, checked_at on every fetch, a check moves checked_at only', async () => {
    const sink = await openPostgresSink({ url: server.url, namespace: 'revisits', batchSize: 50, log: () => undefined });
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const version = (sig: string, s: number, extra: Record<string, unknown> = {}) => ({ ...page(1, { fetchedAt: at(s), title: sig, ...extra }), [SINK_REVISIT]: { signature: sig } });
    await sink.write(version('aaaa', 0));
    await sink.checked({ url: 'http://a.test/1', checkedAt: at(10) });
    // A redelivery of the same version (a retried job): no change counted.
    await sink.write(version('aaaa', 12, { attempts: 2 }));
    await sink.write(version('bbbb', 20));
    await sink.checked({ url: 'http://a.test/1', checkedAt: at(30) });
    // A late duplicate check never moves checked_at back; a check for a URL with no row writes none.
    await Promise.all([sink.checked({ url: 'http://a.test/1', checkedAt: at(25) }), sink.checked({ url: 'http://a.test/none', checkedAt: at(31) })]);
    await sink.write(version('cccc', 40));
    await sink.write(version('cccc', 41, { attempts: 2 }));
    await sink.checked({ url: 'http://a.test/1', checkedAt: at(50) });
    // A one-shot record (no signature) counts no change.
    await sink.write(page(2, { fetchedAt: at(5) }));
    await sink.write(page(2, { fetchedAt: at(6), attempts: 2 }));
    await expect(sink.checked({ url: 'http://a.test/1', checkedAt: 'soon' })).rejects.toThrow(SinkWriteError);
    await sink.close();
    const { rows: stored } = await admin.query<{ url: string; title: string; changes: number; changed_at: Date; checked_at: Date; fetched_at: Date; writes: number; content_sig: string | null }>(
      `SELECT url, title, changes, changed_at, checked_at, fetched_at, writes, content_sig FROM ${RESULTS_TABLE} WHERE namespace = 'revisits' ORDER BY url`,
    );
    expect(stored.map((row) => row.url)).toEqual(['http://a.test/1', 'http://a.test/2']);
    const [one, two] = stored;
    expect(one).toMatchObject({ title: 'cccc', changes: 2, writes: 5, content_sig: 'cccc' });
    expect(one?.changed_at.toISOString()).toBe(at(40));
    expect(one?.fetched_at.toISOString()).toBe(at(41));
    expect(one?.checked_at.toISOString()).toBe(at(50));
    expect(two).toMatchObject({ changes: 0, writes: 2, content_sig: null });
    expect(two?.changed_at.toISOString()).toBe(at(5));
    expect(two?.checked_at.toISOString()).toBe(at(6));
  });

  it('adds the revisit columns to a table made before them, keeping its rows', async () => {
    const database = `old_${process.pid}`;
    await admin.query(`CREATE DATABASE ${database}`);
    const url = server.url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`);
    const old = new pg.Pool({ connectionString: url, max: 1 });
    try {
      // The first schema version, as a crawl before this one left it.
      await old.query('CREATE TABLE crawlq_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      await old.query(`CREATE TABLE ${RESULTS_TABLE} (namespace text NOT NULL, url_fp text NOT NULL, url text NOT NULL, final_url text, status integer, content_type text, title text, depth integer, grp text, skipped text,
        fetched_at timestamptz, attempts integer, record jsonb NOT NULL, body text, writes integer NOT NULL DEFAULT 1, first_written_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (namespace, url_fp))`);
      await old.query('INSERT INTO crawlq_schema_migrations (version) VALUES (1)');
      await old.query(`INSERT INTO ${RESULTS_TABLE} (namespace, url_fp, url, fetched_at, record) VALUES ('n', $1, 'http://a.test/1', '2026-01-01T00:00:00Z', '{}')`, [urlFingerprint('http://a.test/1')]);
      // Two sinks opening at once: one migrates, the other finds it done.
      const sinks = await Promise.all([0, 1].map(() => openPostgresSink({ url, namespace: 'n', log: () => undefined })));
      await sinks[0]!.write({ ...page(1), [SINK_REVISIT]: { signature: 'aaaa' } });
      await sinks[1]!.checked({ url: 'http://a.test/1', checkedAt: '2027-01-01T00:00:00Z' });
      await Promise.all(sinks.map((sink) => sink.close()));
      const { rows: stored } = await old.query<{ writes: number; changes: number; content_sig: string; checked_at: Date }>(`SELECT writes, changes, content_sig, checked_at FROM ${RESULTS_TABLE}`);
      expect(stored).toHaveLength(1);
      // The old row had no signature: its first signed write is no change, only what it is from now on.
      expect(stored[0]).toMatchObject({ writes: 2, changes: 0, content_sig: 'aaaa' });
      expect(stored[0]?.checked_at.toISOString()).toBe('2027-01-01T00:00:00.000Z');
      const { rows: versions } = await old.query<{ version: number }>('SELECT version FROM crawlq_schema_migrations ORDER BY version');
      expect(versions.map((row) => row.version)).toEqual([1, 2]);
    } finally {
      await old.end();
      await admin.query(`DROP DATABASE ${database}`);
    }
  });

  it('holds records while the database is down and stores them once it is back, without duplicates', async () => {
    const logs: string[] = [];
    const sink = await openPostgresSink({ url: server.url, namespace: 'outage', batchSize: 10, log: (line) => logs.push(line) });
    await Promise.all(Array.from({ length: 20 }, (_, i) => sink.write(page(i))));
    await server.crash();
    let settled = 0;
    const held = Array.from({ length: 30 }, (_, i) => sink.write(page(i + 10)).then(() => (settled += 1)));
    // Nothing is reported stored while there is no server.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(settled).toBe(0);
    await server.start();
    await Promise.all(held);
    await sink.close();
    const stored = await rows('outage');
    expect(stored.map((row) => row.url).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `http://a.test/${i}`).sort());
    expect(logs.some((line) => line.includes('holding'))).toBe(true);
    expect(logs.join('\n')).not.toContain(server.password);
  });

  it('waits for a database that is not up yet, saying so without the password', async () => {
    await server.crash();
    const logs: string[] = [];
    const opening = openPostgresSink({ url: server.url, namespace: 'late', log: (line) => logs.push(line) });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await server.start();
    const sink = await opening;
    await sink.write(page(1));
    await sink.close();
    expect(logs.some((line) => line.startsWith('waiting for PostgreSQL at postgres://crawlq:***@127.0.0.1'))).toBe(true);
    expect(logs.join('\n')).not.toContain(server.password);
    expect(await rows('late')).toHaveLength(1);
  });

  it('refuses a wrong password at once with a configuration error that hides it', async () => {
    const url = server.url.replace(server.password, 'wrong-secret-value');
    const error = await openPostgresSink({ url, namespace: 'x', log: () => undefined }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DatabaseConfigError);
    expect((error as Error).message).toContain('postgres://crawlq:***@');
    expect((error as Error).message).not.toContain('wrong-secret-value');
  });

  it('fails only the record the database rejects', async () => {
    const sink = await openPostgresSink({ url: server.url, namespace: 'bad', batchSize: 10, log: () => undefined });
    const results = await Promise.allSettled([sink.write(page(1)), sink.write(page(2, { fetchedAt: 'not a time' })), sink.write(page(3))]);
    await sink.close();
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(SinkWriteError);
    expect((await rows('bad')).map((row) => row.url)).toEqual(['http://a.test/1', 'http://a.test/3']);
  });
});

describe('openResultsStore', () => {
  it('pages through every record and counts them', async () => {
    const sink = await openPostgresSink({ url: server.url, namespace: 'store', log: () => undefined });
    await Promise.all(Array.from({ length: 25 }, (_, i) => sink.write(page(i, { status: i % 4 === 0 ? 404 : 200 }))));
    await sink.write({ url: 'http://a.test/robots-only', skipped: 'robots', decidedAt: new Date().toISOString(), group: 'a.test' });
    await sink.write(page(0, { status: 404, attempts: 2 }));
    await sink.close();
    const store = await openResultsStore({ url: server.url, log: () => undefined });
    try {
      const urls: string[] = [];
      for await (const record of store.records('store', 4)) urls.push(record.url);
      expect(urls).toHaveLength(26);
      expect(new Set(urls).size).toBe(26);
      const stats = await store.stats('store');
      expect(stats).toMatchObject({ rows: 26, pages: 25, skipped: 1, rewritten: 1, groups: 1, byStatus: { '200': 18, '404': 7 } });
      // A one-shot crawl: no page changed after its first fetch.
      expect(stats).toMatchObject({ changedPages: 0, changes: 0 });
    } finally {
      await store.close();
    }
  });
});
