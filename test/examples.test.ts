import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestPostgres, startTestRedis, type TestRedis } from '@crawlq/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCatalogueSite } from './support/catalogue-site.js';
import { cliEnv, runCli } from './support/cli.js';
import { docsPages, newsPages, startStaticSite } from './support/static-site.js';

// Each example in examples/ run as its README line says, against a loopback site.

const example = (name: string) => fileURLToPath(new URL(`../examples/${name}`, import.meta.url));
let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

function crawlArgs(seed: string, crawler: string, namespace: string, dir: string): string[] {
  return ['crawl', seed, '--crawler', example(crawler), '--namespace', namespace, '--state-dir', dir, '--allow-private-network', '--rate', 'none', '--max-depth', '20', '--attempts', '1'];
}

function lines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('examples/', () => {
  it('catalogue-to-postgres: one row per product with its own fields', { timeout: 300_000 }, async () => {
    const site = await startCatalogueSite({ host: '127.0.0.65', pages: 3, productsPerPage: 3, brokenIds: [4] });
    const database = await startTestPostgres();
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-example-'));
      const result = await runCli([...crawlArgs(`${site.origin}/list/1`, 'catalogue-to-postgres.ts', 'example-catalogue', dir), '--database-url', database.url], { env: cliEnv(redis.url), timeoutMs: 240_000 });
      expect(result.code, result.stderr).toBe(0);
      const { rows } = await pool.query<{ url: string; record: { url: string; name: string; price: number; listPage: number }; writes: number }>(
        'SELECT url, record, writes FROM crawlq_results WHERE namespace = $1 ORDER BY url',
        ['example-catalogue'],
      );
      const expected = site.productIds.filter((id) => id !== 4);
      expect(rows.map((row) => row.record).sort((a, b) => a.url.localeCompare(b.url))).toEqual(
        expected.map((id) => ({ url: `${site.origin}/product/${id}`, name: `Product ${id}`, price: id + 0.5, listPage: Math.ceil(id / 3) })).sort((a, b) => a.url.localeCompare(b.url)),
      );
      expect(rows.every((row) => row.writes === 1)).toBe(true);
      expect(result.stderr).toContain('no-price');
    } finally {
      await pool.end();
      await database.stop();
      await site.close();
    }
  });

  it('news-archive: the sitemap\'s articles as items, every page in the WARC', { timeout: 300_000 }, async () => {
    const site = await startStaticSite('127.0.0.66', newsPages);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-example-'));
      const out = join(dir, 'articles.jsonl');
      const warc = join(dir, 'warc');
      const result = await runCli([...crawlArgs(`${site.origin}/`, 'news-archive.ts', 'example-news', dir), '--sitemaps', '--warc', warc, '--out', out], { env: cliEnv(redis.url), timeoutMs: 240_000 });
      expect(result.code, result.stderr).toBe(0);
      const items = lines(out).sort((a, b) => String(a.url).localeCompare(String(b.url)));
      expect(items).toEqual([1, 2, 3, 4, 5].map((id) => ({ url: `${site.origin}/news/${id}`, headline: `Headline ${id}`, published: `2026-12-0${id}`, words: id * 10 })));
      const archived = readdirSync(warc).filter((name) => name.endsWith('.warc.gz')).map((name) => readFileSync(join(warc, name)));
      expect(archived.length).toBeGreaterThan(0);
      // Six pages archived (the home page too); the count of response records is read by the WARC tests' helpers elsewhere.
      expect(site.requests.filter((path) => path.startsWith('/news/'))).toHaveLength(5);
    } finally {
      await site.close();
    }
  });

  it('docs-search-index: one entry per section of every page', { timeout: 300_000 }, async () => {
    const site = await startStaticSite('127.0.0.67', docsPages);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-example-'));
      const out = join(dir, 'search-index.jsonl');
      const result = await runCli([...crawlArgs(`${site.origin}/`, 'docs-search-index.ts', 'example-docs', dir), '--out', out], { env: cliEnv(redis.url), timeoutMs: 240_000 });
      expect(result.code, result.stderr).toBe(0);
      const entries = lines(out);
      expect(entries).toHaveLength(6);
      expect(entries).toContainEqual({ url: `${site.origin}/install#more`, title: 'Docs: install', section: 'More on install', text: 'Details of install.' });
    } finally {
      await site.close();
    }
  });
});
