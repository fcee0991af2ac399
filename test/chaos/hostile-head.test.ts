import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.js';
import { readRecords } from '../support/records.js';

// A page's `<html lang>` and `<link rel="canonical">` are the site's to write:
// megabytes in either must not make its record unbounded. lang is cut like the
// title; a canonical URL too long to keep is dropped, as a cut one would name
// another page; the record says which in `truncated`.
const LANG = 'x'.repeat(2_000_000);
const CANONICAL = `/canonical?${'q'.repeat(2_000_000)}`;
let redis: TestRedis;
let server: Server;
let base: string;

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    if (request.url === '/robots.txt') return response.writeHead(404).end();
    const html = (head: string, lang: string) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<html lang="${lang}"><head><title>t</title>${head}</head><body><a href="/fair">fair</a></body></html>`);
    if (request.url === '/') return html(`<link rel="canonical" href="${CANONICAL}">`, LANG);
    // Just over the caps: a canonical that is 2,049 characters once normalised, a lang of 101.
    if (request.url === '/edge') return html(`<link rel="canonical" href="/c?${'e'.repeat(2_049 - `${base}c?`.length)}">`, 'y'.repeat(101));
    if (request.url === '/fair') return html('<link rel="canonical" href="/fair">', 'en-GB');
    return response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  base = `http://127.0.0.2:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

describe('a hostile <head>', () => {
  it('caps lang at 100 code points and drops a canonical URL over 2,048 characters, in the written record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-hostile-head-'));
    const out = join(dir, 'results.jsonl');
    const result = await runCli(
      ['crawl', base, `${base}edge`, '--out', out, '--namespace', 'hostile-head', '--allow-private-network', '--rate', 'none', '--max-depth', '1', '--state-dir', dir],
      { env: cliEnv(redis.url), timeoutMs: 200_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const records = readRecords(out);
    const hostile = records.find((record) => record.url === base);
    expect(hostile?.lang).toBe('x'.repeat(100));
    expect(hostile?.canonical).toBeNull();
    expect(hostile?.truncated).toEqual(['canonical', 'lang']);
    const edge = records.find((record) => record.url === `${base}edge`);
    expect(edge?.lang).toBe('y'.repeat(100));
    expect(edge?.canonical).toBeNull();
    expect(edge?.truncated).toEqual(['canonical', 'lang']);
    // A page within the caps keeps both and says nothing was cut.
    const fair = records.find((record) => record.url === `${base}fair`);
    expect(fair?.lang).toBe('en-GB');
    expect(fair?.canonical).toBe(`${base}fair`);
    expect(fair?.truncated).toBeUndefined();
    // Each record is small: the megabytes stayed out of the file.
    expect(readFileSync(out, 'utf8').length).toBeLessThan(20_000);
  }, 240_000);
});
