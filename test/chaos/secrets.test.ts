import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.js';
import { readRecords } from '../support/records.js';

// #10 item 5: a password given to crawlq, or handed to it by a site's
// redirect, never reaches any output: stderr, stdout, the results file.
const SECRET = 'S3cr3tPw';
let redis: TestRedis;
let server: Server;
let base: string;

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    const host = `127.0.0.2:${(server.address() as { port: number }).port}`;
    const html = (body: string) => response.writeHead(200, { 'content-type': 'text/html' }).end(`<html><head><title>t</title></head><body>${body}</body></html>`);
    if (request.url === '/') return html('<a href="/login">login</a> <a href="/again">again</a>');
    // Redirects whose Location carries user:password, first to a new page, then to a seen one.
    if (request.url === '/login' || request.url === '/again') return response.writeHead(302, { location: `http://admin:${SECRET}@${host}/inside` }).end();
    if (request.url === '/inside') return html('inside');
    return response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  base = `http://127.0.0.2:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await redis.stop();
});

describe('secrets never reach output (#10)', () => {
  it.each([
    { name: 'REDIS_URL', env: { REDIS_URL: `redis://:${SECRET}@127.0.0.1:99999` }, shown: 'redis://127.0.0.1:99999' },
    { name: 'SMTP_URL', env: { SMTP_URL: `smtp://alerts:${SECRET}@127.0.0.1:99999` }, shown: 'smtp://127.0.0.1:99999' },
  ])('an invalid $name is refused without echoing its password', async ({ env, shown }) => {
    const result = await runCli(['status'], { env: cliEnv(undefined, env) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(shown);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  }, 240_000);

  it('a redirect Location with user:password leaves no credentials in records or logs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-secrets-'));
    const out = join(dir, 'results.jsonl');
    const result = await runCli(
      ['crawl', base, '--out', out, '--namespace', 'secrets', '--allow-private-network', '--rate', 'none', '--concurrency', '1', '--state-dir', dir],
      { env: cliEnv(redis.url), timeoutMs: 200_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const records = readRecords(out);
    // The redirect was followed (the page exists in the results), yet no output holds the secret.
    expect(records.some((record) => record.finalUrl?.endsWith('/inside'))).toBe(true);
    expect(readFileSync(out, 'utf8')).not.toContain(SECRET);
    expect(readFileSync(out, 'utf8')).not.toContain('admin@');
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  }, 240_000);
});
