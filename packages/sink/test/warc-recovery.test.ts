import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readWarcWithAllReaders, resolveWarcPointer } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarcWriter, recoverWarcFiles, WarcDirectoryError, WarcWriteError, type ArchivedExchange, type WarcLocation, type WarcWriterLease } from '../src/index.js';

function exchange(i: number, body: Uint8Array = gzipSync(`<html><title>page ${i}</title>${'x'.repeat(1_000 + i)}</html>`)): ArchivedExchange {
  return {
    url: `http://127.0.0.1:8080/p/${i}`,
    requestedAt: new Date(Date.UTC(2026, 11, 2, 10, 0, i % 60)),
    request: { method: 'GET', target: `/p/${i}`, headers: [['Host', '127.0.0.1:8080']] },
    response: { httpVersion: '1.1', status: 200, statusText: 'OK', headers: [['Content-Type', 'text/html']], body },
  };
}

/** The lease store's contract in memory (the worker's is Redis, tested end to end): a lease lasts until released or expired. */
class MemoryLease implements WarcWriterLease {
  readonly until = new Map<string, number>();
  hold(writer: string, ttlMs: number) {
    this.until.set(writer, Date.now() + ttlMs);
    return Promise.resolve();
  }
  release(writer: string) {
    this.until.delete(writer);
    return Promise.resolve();
  }
  remainingMs(writer: string) {
    return Promise.resolve(Math.max(0, (this.until.get(writer) ?? 0) - Date.now()));
  }
}

const openFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.open'));

describe('recovering the .open files of stopped writers', () => {
  it('cuts a killed writer\'s file at its last whole record and closes it under the name its records carry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-recover-'));
    const lease = new MemoryLease();
    const writer = openWarcWriter({ dir, maxFileBytes: 1_000_000, prefix: 'crawl', software: 'test', lease });
    const locations = await Promise.all(Array.from({ length: 8 }, (_, i) => writer.write(exchange(i))));
    // The writer "dies" mid-write: the start of a gzip member at the end, and its lease runs out.
    const [open] = openFiles(dir);
    const whole = statSync(join(dir, open!)).size;
    const next = readFileSync(join(dir, open!)).subarray(locations[7]!.offset, locations[7]!.offset + locations[7]!.length);
    appendFileSync(join(dir, open!), next.subarray(0, 120));
    await lease.release(writer.id);

    const pass = await recoverWarcFiles({ dir, prefix: 'crawl', lease });
    expect(pass.recovered).toEqual([{ file: locations[0]!.file, writer: writer.id, keptBytes: whole, cutBytes: 120, removed: false }]);
    expect(readdirSync(dir)).toEqual([locations[0]!.file]);
    await readWarcWithAllReaders(readFileSync(join(dir, locations[0]!.file)), locations[0]!.file);
    for (const location of locations) {
      const [response] = await resolveWarcPointer(dir, location);
      expect(response?.headers['warc-target-uri']).toMatch(/\/p\/\d$/);
    }
    // A second pass (another worker starting) finds nothing left to do.
    expect((await recoverWarcFiles({ dir, prefix: 'crawl', lease })).recovered).toEqual([]);
  });

  it('never takes a live writer\'s file: a held lease, or a pid alive on this host, keeps it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-recover-'));
    const lease = new MemoryLease();
    const a = openWarcWriter({ dir, maxFileBytes: 1_000_000, prefix: 'crawl', software: 'test', lease });
    const b = openWarcWriter({ dir, maxFileBytes: 1_000_000, prefix: 'crawl', software: 'test', lease });
    await Promise.all([a.write(exchange(1)), b.write(exchange(2))]);
    // B starts its recovery while A writes: A's file has a lease, B's own is skipped.
    const pass = await recoverWarcFiles({ dir, prefix: 'crawl', lease, self: [b.id] });
    expect(pass.recovered).toEqual([]);
    expect(pass.leased.map((file) => file.writer)).toEqual([a.id]);
    expect(openFiles(dir)).toHaveLength(2);

    // A file of a writer without a lease (an older version) whose pid is alive on this host stays too.
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const [aFile] = openFiles(dir).filter((name) => name.includes(a.id));
      const oldName = aFile!.replace(a.id, `${a.id.split('-').slice(0, -2).join('-')}-${sleeper.pid}-abcdef`);
      copyFileSync(join(dir, aFile!), join(dir, oldName));
      const again = await recoverWarcFiles({ dir, prefix: 'crawl', lease, self: [b.id] });
      expect(again.alive).toEqual([oldName]);
      expect(again.recovered).toEqual([]);
      sleeper.kill('SIGKILL');
      await new Promise((resolve) => sleeper.once('exit', resolve));
      // Its pid gone: it is recovered, under the name without `.open`.
      const after = await recoverWarcFiles({ dir, prefix: 'crawl', lease, self: [b.id] });
      expect(after.recovered.map((file) => file.file)).toEqual([oldName.slice(0, -'.open'.length)]);
    } finally {
      sleeper.kill('SIGKILL');
    }
    // A file of another crawl (another prefix) is not this crawl's to judge.
    const foreign = openFiles(dir).find((name) => name.includes(a.id))!.replace(/^crawl-/, 'other-');
    copyFileSync(join(dir, openFiles(dir).find((name) => name.includes(a.id))!), join(dir, foreign));
    expect((await recoverWarcFiles({ dir, prefix: 'crawl', lease })).recovered.map((file) => file.writer).sort()).toEqual([]);
    await Promise.all([a.close(), b.close()]);
    expect(lease.until.size).toBe(0);
    expect(openFiles(dir)).toEqual([foreign]);
  });

  it('recovers a file from another host once its lease has ended, and removes one that holds no whole record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-warc-recover-'));
    const lease = new MemoryLease();
    const writer = openWarcWriter({ dir, maxFileBytes: 1_000_000, prefix: 'crawl', software: 'test', lease });
    const location = await writer.write(exchange(3));
    const [open] = openFiles(dir);
    // The same bytes as written on another machine, pid 1, cut inside the request record.
    const remote = open!.replace(writer.id, 'other-host.example-1-0a0b0c');
    copyFileSync(join(dir, open!), join(dir, remote));
    appendFileSync(join(dir, remote), randomBytes(50));
    const empty = open!.replace(writer.id, 'other-host.example-1-0d0e0f');
    appendFileSync(join(dir, empty), readFileSync(join(dir, open!)).subarray(0, 40));
    await lease.hold('other-host.example-1-0a0b0c', 60_000);
    const held = await recoverWarcFiles({ dir, prefix: 'crawl', lease, self: [writer.id] });
    expect(held.leased.map((file) => file.name)).toEqual([remote]);
    expect(held.recovered.map((file) => [file.file, file.removed])).toEqual([[empty.slice(0, -5), true]]);
    await lease.release('other-host.example-1-0a0b0c');
    const freed = await recoverWarcFiles({ dir, prefix: 'crawl', lease, self: [writer.id] });
    expect(freed.recovered.map((file) => [file.file, file.cutBytes])).toEqual([[remote.slice(0, -5), 50]]);
    await resolveWarcPointer(dir, { ...location, file: remote.slice(0, -5) });
    await writer.close();
  });
});

describe('a WARC write that fails', () => {
  it('names --warc when the directory cannot be created', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'crawlq-warc-')), 'a-file');
    appendFileSync(file, 'x');
    expect(() => openWarcWriter({ dir: join(file, 'warc'), maxFileBytes: 1_000, prefix: 'x', software: 'x' })).toThrow(WarcDirectoryError);
    expect(() => openWarcWriter({ dir: join(file, 'warc'), maxFileBytes: 1_000, prefix: 'x', software: 'x' })).toThrow(/^--warc: cannot use .*a-file\/warc as the WARC directory: ENOTDIR/);
  });

  // A real full disk: a 48 KiB tmpfs (the sandbox runs as root; without mount the test says so and is skipped).
  const mountPoint = join(tmpdir(), `crawlq-warc-full-${process.pid}`);
  let mounted = false;
  beforeAll(() => {
    mkdirSync(mountPoint, { recursive: true });
    mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=48k', 'tmpfs', mountPoint]).status === 0;
  });
  afterAll(() => {
    if (mounted) spawnSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it('ENOSPC: the file is cut back to its last whole record and closed, the page fails naming --warc, later pages go on', async (context) => {
    if (!mounted) context.skip('cannot mount a tmpfs here');
    const writer = openWarcWriter({ dir: mountPoint, maxFileBytes: 1_000_000, prefix: 'full', software: 'test' });
    const written: WarcLocation[] = [];
    const failures: unknown[] = [];
    // Random bodies do not compress: about 5 KiB a page, so 48 KiB fill within a dozen.
    for (let i = 0; i < 14; i += 1) {
      await writer.write(exchange(i, randomBytes(5_000))).then((location) => written.push(location), (error: unknown) => failures.push(error));
    }
    await writer.close();
    expect(written.length).toBeGreaterThan(3);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(WarcWriteError);
      expect(failure).toMatchObject({ failureReason: 'warc', retryable: false, code: 'ENOSPC' });
      expect((failure as Error).message).toMatch(/^--warc: could not write to .*\(ENOSPC: no space left on device.*closed at its last whole record$/);
    }
    // No file is left open, each reads whole with all three readers, and every page written resolves.
    expect(openFiles(mountPoint)).toEqual([]);
    for (const name of readdirSync(mountPoint)) await readWarcWithAllReaders(readFileSync(join(mountPoint, name)), name);
    for (const location of written) await resolveWarcPointer(mountPoint, location);
  });
});
