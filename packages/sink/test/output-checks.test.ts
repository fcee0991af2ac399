import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@crawlq/config';
import { describe, expect, it } from 'vitest';
import { checkAppendableFile, checkResultTarget, checkWritableDirectory, OutputPathError } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'crawlq-output-checks-'));
const aFile = join(dir, 'a-file');
writeFileSync(aFile, 'kept\n');

describe('checkWritableDirectory', () => {
  it('creates the directory and leaves nothing in it', () => {
    const warc = join(dir, 'nested', 'warc');
    checkWritableDirectory(warc, '--warc');
    expect(readdirSync(warc)).toEqual([]);
  });

  it('refuses a path under a regular file as an input error, naming the option and the path once', () => {
    const warc = join(aFile, 'warc');
    let thrown: unknown;
    try {
      checkWritableDirectory(warc, '--warc');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError); // exit 2
    expect((thrown as Error).message).toBe(`--warc: cannot create directory ${warc} (ENOTDIR: not a directory)`);
  });
});

describe('checkAppendableFile', () => {
  it('creates a missing file empty and keeps an existing one as it was', () => {
    const fresh = join(dir, 'out', 'results.jsonl');
    checkAppendableFile(fresh, '--out');
    expect(readFileSync(fresh, 'utf8')).toBe('');
    checkAppendableFile(aFile, '--out');
    expect(readFileSync(aFile, 'utf8')).toBe('kept\n');
  });

  it('refuses a directory and a path under a regular file', () => {
    expect(() => checkAppendableFile(dir, '--out')).toThrow(`--out: cannot write ${dir} (EISDIR: illegal operation on a directory)`);
    expect(() => checkAppendableFile(join(aFile, 'results.jsonl'), '--out')).toThrow(`--out: cannot create directory ${aFile} (EEXIST: file already exists)`);
    expect(existsSync(join(aFile, 'results.jsonl'))).toBe(false);
  });

  it('is what checkResultTarget does for the JSONL sink', async () => {
    await expect(checkResultTarget({ kind: 'jsonl', path: dir }, { option: '--out', log: () => undefined })).rejects.toThrow(OutputPathError);
  });
});
