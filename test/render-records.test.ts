import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSpaSite, type SpaSite } from '@crawlq/demo-site';
import { findChromium } from '@crawlq/renderer';
import { maxInWindow, readWarcWithAllReaders, startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { readRecords } from './support/records.js';

const chromium = findChromium();
if (chromium === undefined) console.warn('render record e2e skipped: no system Chromium (apt-get install -y chromium)');

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** One crawl of `seed` alone (--max-depth 0) with --render always and one worker. */
async function crawlOne(site: SpaSite, seed: string, options: { name: string; config: object; args: (dir: string) => readonly string[] }) {
  const dir = mkdtempSync(join(tmpdir(), `crawlq-${options.name}-`));
  const out = join(dir, 'out.jsonl');
  const config = join(dir, 'crawlq.json');
  writeFileSync(config, JSON.stringify(options.config));
  const result = await runCli(
    ['crawl', seed, '--workers', '1', '--render', 'always', '--allow-private-network', '--max-depth', '0', '--namespace', options.name, '--state-dir', dir, '--config', config, '--out', out, ...options.args(dir)],
    { env: cliEnv(redis.url), timeoutMs: 240_000 },
  );
  const requests = () => site.requests.map((request) => `${request.host} ${request.path} ${request.status ?? ''}`).join('\n');
  expect(result.code, `${result.stderr}\n${requests()}`).toBe(0);
  return { dir, records: readRecords(out), stderr: result.stderr };
}

describe.skipIf(chromium === undefined)('a rendered page whose content requests its gate does not admit in time', () => {
  let site: SpaSite;
  beforeAll(async () => {
    site = await startSpaSite({ appHost: '127.0.0.84', scriptHost: '127.0.0.85', staticHost: '127.0.0.86', appPages: 2, staticPages: 1 });
  });
  afterAll(async () => site?.close());

  it('is tried again, each attempt fetching its document once, and only its last attempt is recorded, as incomplete, naming what it went without', { timeout: 300_000 }, async () => {
    const seed = site.appUrls[1] ?? '';
    // The script host's robots.txt takes its only start in ten minutes: its app.js can never be admitted in the page's time.
    const { records, stderr } = await crawlOne(site, seed, {
      name: 'render-never-admitted',
      config: { limitRules: [{ match: '127.0.0.85', rate: '1/10m' }] },
      args: () => ['--render-timeout', '2s', '--attempts', '3', '--backoff', '200ms'],
    });
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record?.url).toBe(seed);
    expect(record?.attempts).toBe(3);
    expect(record?.render?.complete).toBe(false);
    expect(record?.render?.missing).toEqual([`${site.scriptOrigin}/app.js`]);
    const script = record?.render?.log.filter((request) => request.url === `${site.scriptOrigin}/app.js`) ?? [];
    expect(script.map((request) => [request.resourceType, request.fate])).toEqual([['script', 'deferred']]);
    expect(script[0]?.why).toMatch(/not admitted in time/);
    // What the page had: the shell, no content, no links (a plain fetch's record would say the same, but now it says why).
    expect(record?.title).toBe('Loading');
    expect(record?.links).toEqual([]);
    expect(stderr).toMatch(/without 1 content request\(s\).*last attempt: recorded with complete: false/);
    // At the servers: the script host saw its robots.txt and nothing else; the app host its
    // document once per attempt and no API call (the script that would make it never ran).
    const scriptHost = site.requests.filter((request) => request.host === '127.0.0.85');
    expect(scriptHost.map((request) => request.path)).toEqual(['/robots.txt']);
    const appHost = site.requests.filter((request) => request.host === '127.0.0.84');
    expect(appHost.filter((request) => request.path === '/app/1')).toHaveLength(3);
    expect(appHost.filter((request) => request.path.startsWith('/api/'))).toEqual([]);
  });

  it('is recorded complete, with its links, once an attempt gets its script within its time; the script host never saw two starts within its rate', { timeout: 300_000 }, async () => {
    const before = site.requests.length;
    const seed = site.appUrls[0] ?? '';
    // One start per 6 s at the script host: the first attempt (robots.txt just took the start)
    // cannot get app.js within 2 s + 2 s of gate wait; a later attempt can.
    const { records } = await crawlOne(site, seed, {
      name: 'render-admitted-later',
      config: { limitRules: [{ match: '127.0.0.85', rate: '1/6s' }] },
      args: () => ['--render-timeout', '2s', '--attempts', '10', '--backoff', '1s'],
    });
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record?.render?.complete, JSON.stringify(record?.render)).toBe(true);
    expect(record?.render?.missing).toBeUndefined();
    expect(record?.attempts).toBeGreaterThanOrEqual(2);
    expect(record?.title).toBe('App page /app/0');
    expect(record?.links).toEqual(expect.arrayContaining(site.expectedLinks(seed).slice(0, 2)));
    const requests = site.requests.slice(before);
    // Each attempt fetched the document once; the content came once, in the last.
    expect(requests.filter((request) => request.host === '127.0.0.84' && request.path === '/app/0')).toHaveLength(record?.attempts ?? -1);
    expect(requests.filter((request) => request.path === '/api/app/0')).toHaveLength(1);
    // This crawl's starts only: the case before ran a crawl of its own (another namespace, its own
    // limits) whose robots.txt request may have come less than 6 s before this one's.
    const scriptStarts = requests.filter((request) => request.host === '127.0.0.85').map((request) => request.startedAt);
    expect(maxInWindow(scriptStarts, 6_000)).toBe(1);
  });
});

describe.skipIf(chromium === undefined)('records of rendered pages', () => {
  let site: SpaSite;
  beforeAll(async () => {
    site = await startSpaSite({ appHost: '127.0.0.87', scriptHost: '127.0.0.88', staticHost: '127.0.0.89', appPages: 3, staticPages: 1 });
  });
  afterAll(async () => site?.close());

  it('--warc: the response record holds the shell as served, a conversion record referring to it holds the rendered DOM; --screenshot writes the PNG the record names', { timeout: 300_000 }, async () => {
    const seed = site.appUrls[1] ?? '';
    const { dir, records } = await crawlOne(site, seed, {
      name: 'render-warc',
      config: { limitRules: [{ match: '127.0.0.87', clickSelector: '#more', clickSteps: 2 }] },
      args: (dir) => ['--render-timeout', '20s', '--warc', join(dir, 'warc'), '--screenshot', join(dir, 'shots')],
    });
    expect(records).toHaveLength(1);
    const [record] = records;
    const expected = site.expectedLinks(seed);
    expect(record?.render?.complete).toBe(true);
    expect(record?.render?.steps).toBe(1);
    expect(new Set(record?.links)).toEqual(new Set(expected));

    // The WARC slice the record points at: response, request, then the conversion.
    const pointer = record?.warc;
    expect(pointer).toBeDefined();
    const bytes = readFileSync(join(dir, 'warc', pointer?.file ?? '')).subarray(pointer?.offset, (pointer?.offset ?? 0) + (pointer?.length ?? 0));
    const warc = await readWarcWithAllReaders(bytes, 'the rendered page');
    expect(warc.map((member) => member.headers['warc-type'])).toEqual(['response', 'request', 'conversion']);
    const [response, , conversion] = warc;
    expect(conversion?.headers['warc-refers-to']).toBe(response?.headers['warc-record-id']);
    expect(conversion?.headers['warc-target-uri']).toBe(seed);
    expect(conversion?.headers['content-type']).toMatch(/^text\/html/);
    // The response is the shell as the server sent it: no title, no links.
    const served = response?.block.toString('utf8') ?? '';
    expect(served).toMatch(/^HTTP\/1\.1 200/);
    expect(served).toContain('<title>Loading</title>');
    for (const link of expected) expect(served).not.toContain(link);
    // The conversion is the DOM after the script, the XHR and the "load more" click.
    const dom = conversion?.block.toString('utf8') ?? '';
    expect(dom).toContain('<title>App page /app/1</title>');
    for (const link of expected) expect(dom).toContain(`href="${link}"`);
    expect(Number(conversion?.headers['content-length'])).toBe(conversion?.block.length);

    // The screenshot the record names: a PNG at the browser's viewport size.
    const shot = record?.render?.screenshot ?? '';
    expect(shot).toMatch(/\.png$/);
    const png = readFileSync(join(dir, 'shots', shot));
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 720]);
  });
});
