import { readdirSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readWarcWithAllReaders } from '@crawlq/testing';
import { WARCParser } from 'warcio';
import { describe, expect, it } from 'vitest';
import { newWarcRecordId, openWarcWriter, WARC_REVISIT_PROFILES, warcPayloadDigest, type ArchivedExchange, type WarcCapture } from '../src/index.js';

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

  it('writes a 304 and an identical payload as WARC/1.1 revisit records that name the capture they repeat', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-'));
    const writer = openWarcWriter({ dir, maxFileBytes: 1_000_000, prefix: 'rv', software: 'x' });
    const first = exchange(1);
    const capture: WarcCapture = { recordId: newWarcRecordId(), date: first.requestedAt.toISOString(), targetUri: first.url, payloadDigest: warcPayloadDigest(first.response.body) };
    await writer.write({ ...first, recordId: capture.recordId });
    const later = new Date(first.requestedAt.getTime() + 60_000);
    const notModified: ArchivedExchange = {
      ...first,
      requestedAt: later,
      request: { ...first.request, headers: [...first.request.headers, ['If-None-Match', '"v1"']] },
      response: { httpVersion: '1.1', status: 304, statusText: 'Not Modified', headers: [['ETag', '"v1"']], body: new Uint8Array() },
      revisit: { profile: 'server-not-modified', refersTo: capture },
    };
    await writer.write(notModified);
    // The same bytes again: a revisit record whose block is the head alone.
    await writer.write({ ...first, requestedAt: new Date(later.getTime() + 60_000), revisit: { profile: 'identical-payload-digest', refersTo: capture } });
    // A 304 whose capture is unknown (archived before the crawl had --warc) names none.
    await writer.write({ ...notModified, revisit: { profile: 'server-not-modified', refersTo: undefined } });
    // A payload that differs is not a revisit of the capture.
    await expect(writer.write({ ...exchange(2), revisit: { profile: 'identical-payload-digest', refersTo: capture } })).rejects.toThrow(TypeError);
    await writer.close();
    const [name] = readdirSync(dir);
    const checked = await readWarcWithAllReaders(readFileSync(join(dir, name!)), name);
    const main = checked.filter((record) => record.headers['warc-type'] !== 'request' && record.headers['warc-type'] !== 'warcinfo');
    expect(main.map((record) => record.headers['warc-type'])).toEqual(['response', 'revisit', 'revisit', 'revisit']);
    const [response, server, identical, unknown] = main;
    expect(response?.headers['warc-record-id']).toBe(capture.recordId);
    expect(response?.headers['warc-payload-digest']).toBe(capture.payloadDigest);
    expect(server?.headers['warc-profile']).toBe(WARC_REVISIT_PROFILES['server-not-modified']);
    expect(identical?.headers['warc-profile']).toBe(WARC_REVISIT_PROFILES['identical-payload-digest']);
    for (const revisit of [server, identical]) {
      expect(revisit?.version).toBe('WARC/1.1');
      expect(revisit?.headers['warc-refers-to']).toBe(capture.recordId);
      expect(revisit?.headers['warc-refers-to-target-uri']).toBe(capture.targetUri);
      expect(revisit?.headers['warc-refers-to-date']).toBe(capture.date);
      expect(revisit?.headers['warc-payload-digest']).toBe(capture.payloadDigest);
      expect(revisit?.headers['content-type']).toMatch(/^application\/http; ?msgtype=response$/);
      // The block is the HTTP head only: it ends at the blank line.
      expect(revisit!.block.indexOf('\r\n\r\n') + 4).toBe(revisit!.block.length);
    }
    expect(server?.block.toString('latin1')).toMatch(/^HTTP\/1\.1 304 Not Modified\r\n/);
    expect(server?.headers['warc-truncated']).toBeUndefined();
    expect(identical?.block.toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(identical?.headers['warc-truncated']).toBe('length');
    expect(unknown?.headers['warc-profile']).toBe(WARC_REVISIT_PROFILES['server-not-modified']);
    expect(unknown?.headers['warc-refers-to']).toBeUndefined();
    expect(unknown?.headers['warc-refers-to-date']).toBeUndefined();
    // Each revisit has its request, the conditional one included.
    const requests = checked.filter((record) => record.headers['warc-type'] === 'request');
    expect(requests.map((record) => record.headers['warc-concurrent-to'])).toEqual(main.map((record) => record.headers['warc-record-id']));
    expect(requests[1]?.block.toString('latin1')).toContain('If-None-Match: "v1"');
  });
});
