import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openJsonlSink } from '../src/index.js';

describe('openJsonlSink', () => {
  it('appends one JSON object per line and keeps earlier lines', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'crawlq-sink-')), 'nested', 'out.jsonl');
    const first = openJsonlSink(file);
    await first.write({ url: 'http://a.test/', n: 1 });
    await first.close();
    const second = openJsonlSink(file);
    await second.write({ url: 'http://a.test/\n"quoted"', n: 2 });
    await second.close();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as { n: number }).map((record) => record.n)).toEqual([1, 2]);
  });

  it('does not interleave lines written by several processes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-sink-'));
    const file = join(dir, 'shared.jsonl');
    const script = fileURLToPath(new URL('./fixtures-writer.ts', import.meta.url));
    await Promise.all(
      ['a', 'b', 'c'].map(
        (name) =>
          new Promise((resolve) =>
            fork(script, [file, name], { execArgv: ['--conditions=@crawlq/source', '--import', 'tsx'] }).on('exit', resolve),
          ),
      ),
    );
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(1500);
    const records = lines.map((line) => JSON.parse(line) as { w: string; i: number });
    for (const name of ['a', 'b', 'c']) {
      expect(records.filter((record) => record.w === name).map((record) => record.i)).toEqual([...Array(500).keys()]);
    }
  });

  it('takes 5,000 concurrent writes with one error listener and no listener warning', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'crawlq-sink-')), 'many.jsonl');
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const sink = openJsonlSink(file);
      await Promise.all(Array.from({ length: 5_000 }, (_, i) => sink.write({ url: `http://a.test/${i}`, pad: 'x'.repeat(200) })));
      await sink.close();
      // 'warning' is emitted on the next tick; give it one before looking.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    expect(readFileSync(file, 'utf8').trimEnd().split('\n')).toHaveLength(5_000);
  });

  it.runIf(existsSync('/dev/full'))('rejects every pending write when the disk is full, and later writes too', async () => {
    const sink = openJsonlSink('/dev/full');
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => sink.write({ url: `http://a.test/${i}` })));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(20).fill('rejected'));
    await expect(sink.write({ url: 'http://a.test/late' })).rejects.toThrow(/ENOSPC/);
    await sink.close().catch(() => undefined);
  });
});
