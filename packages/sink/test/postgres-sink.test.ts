import { startTestPostgres, type TestPostgres } from '@crawlq/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseConfigError, openPostgresSink, openResultsStore, RESULTS_TABLE, SinkWriteError, urlFingerprint } from '../src/index.js';

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
    } finally {
      await store.close();
    }
  });
});
