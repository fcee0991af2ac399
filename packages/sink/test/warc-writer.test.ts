import { readdirSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readWarcWithAllReaders } from '@crawlq/testing';
import { WARCParser } from 'warcio';
import { describe, expect, it } from 'vitest';
import { openWarcWriter, type ArchivedExchange } from '../src/index.js';

function exchange(i: number): ArchivedExchange {
  const html = `<html><title>page ${i}</title>${'x'.repeat(2_000 + i)}</html>`;
  return {
    url: `http://127.0.0.1:8080/p/${i}`,
    requestedAt: new Date(Date.UTC(2026, 11, 2, 10, 0, i % 60)),
    request: { method: 'GET', target: `/p/${i}`, headers: [['Host', '127.0.0.1:8080'], ['User-Agent', 'crawlq-test'], ['accept-encoding', 'gzip']] },
    response: {
      httpVersion: '1.1',
      status: i % 5 === 0 ? 404 : 200,
      statusText: i % 5 === 0 ? 'Not Found' : 'OK',
      headers: [['Content-Type', 'text/html'], ['Content-Encoding', 'gzip'], ['Transfer-Encoding', 'chunked'], ['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2']],
      body: gzipSync(html),
    },
  };
}

describe('openWarcWriter', () => {
  it('writes request and response records, gzip per record, rotated by size, readable by three independent readers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-'));
    const writer = openWarcWriter({ dir, maxFileBytes: 8_000, prefix: 'test', software: 'crawlq-test' });
    const locations = await Promise.all(Array.from({ length: 20 }, (_, i) => writer.write(exchange(i))));
    // Still being written: the `.open` suffix says so.
    expect(readdirSync(dir).filter((name) => name.endsWith('.open'))).toHaveLength(1);
    await writer.close();
    const files = readdirSync(dir).sort();
    expect(files.every((name) => /^test-\d{17}-\d{5}-[A-Za-z0-9._-]+-\d+-[0-9a-f]{6}\.warc\.gz$/.test(name))).toBe(true);
    expect(files.length).toBeGreaterThan(2);
    expect(new Set(locations.map((location) => location.file))).toEqual(new Set(files));

    const seen = new Map<string, { status: number | string | undefined; body: string }>();
    let requests = 0;
    for (const name of files) {
      const bytes = readFileSync(join(dir, name));
      // Each file but the last stays under the cap (a file takes one more page only when empty).
      if (name !== files.at(-1)) expect(bytes.length).toBeLessThanOrEqual(8_000);
      // Three readers that share no code must read it alike (a strict member walker, warcio, node-warc).
      const checked = await readWarcWithAllReaders(bytes, name);
      expect(checked[0]?.headers['warc-type']).toBe('warcinfo');
      expect(checked.every((record) => record.version === 'WARC/1.1')).toBe(true);
      // The locations the writer returned point at the response members.
      for (const location of locations.filter((where) => where.file === name)) {
        const member = checked.find((record) => record.offset === location.offset);
        expect(member?.headers['warc-type']).toBe('response');
        const next = checked[checked.indexOf(member!) + 1];
        expect(member!.length + next!.length).toBe(location.length);
        expect(next?.headers['warc-concurrent-to']).toBe(member?.headers['warc-record-id']);
        // Repeated response headers stay separate lines, as the server sent them.
        expect(member!.block.toString('latin1')).toContain('Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n');
      }
      const parser = new WARCParser(new Blob([bytes]).stream());
      for await (const record of parser) {
        if (record.warcType === 'request') {
          requests += 1;
          expect(record.httpHeaders?.method).toBe('GET');
          expect(record.httpHeaders?.headers.get('User-Agent')).toBe('crawlq-test');
        }
        if (record.warcType !== 'response') continue;
        const raw = Buffer.from(await record.readFully());
        seen.set(record.warcTargetURI ?? '', {
          status: record.httpHeaders?.statusCode,
          body: gunzipSync(raw).toString(),
        });
        expect(record.httpHeaders?.headers.get('Transfer-Encoding')).toBeNull();
        expect(record.httpHeaders?.headers.get('X-Crawlq-Orig-Transfer-Encoding')).toBe('chunked');
        expect(record.warcHeaders.headers.get('WARC-Payload-Digest')).toMatch(/^sha256:/);
      }
    }
    expect(requests).toBe(20);
    expect(seen.size).toBe(20);
    for (let i = 0; i < 20; i += 1) {
      const page = seen.get(`http://127.0.0.1:8080/p/${i}`);
      expect(page?.status).toBe(i % 5 === 0 ? 404 : 200);
      expect(page?.body).toContain(`<title>page ${i}</title>`);
    }
  });

  it('gives two writers in one directory distinct file names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-'));
    const a = openWarcWriter({ dir, maxFileBytes: 1_000_000, prefix: 'same', software: 'x' });
    const b = openWarcWriter({ dir, maxFileBytes: 1_000_000, prefix: 'same', software: 'x' });
    await Promise.all([a.write(exchange(1)), b.write(exchange(2))]);
    await Promise.all([a.close(), b.close()]);
    expect(readdirSync(dir)).toHaveLength(2);
  });
});
