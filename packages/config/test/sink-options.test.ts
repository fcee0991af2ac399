import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/index.js';

function errorOf(action: () => unknown): ConfigError {
  try {
    action();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('results sink options', () => {
  it('accepts a database URL and a postgres:// --out', () => {
    expect(loadConfig({ flags: { databaseUrl: 'postgres://u:p@db:5432/crawls' } }).databaseUrl).toBe('postgres://u:p@db:5432/crawls');
    expect(loadConfig({ flags: { out: 'postgresql://db/crawls', sink: 'postgres' } }).sink).toBe('postgres');
    expect(loadConfig({ flags: { warc: 'archives', warcMaxSize: '64kb', storeBody: 'true' } })).toMatchObject({ warc: 'archives', warcMaxSize: 65_536, storeBody: true });
  });

  it('rejects a malformed database URL without echoing its password', () => {
    const error = errorOf(() => loadConfig({ env: { CRAWLQ_DATABASE_URL: 'postgres://crawlq:s3cr3t-pw@bad host/db' } }));
    expect(error.option).toBe('CRAWLQ_DATABASE_URL');
    // The one redaction owner (@crawlq/urls) masks the password of an echoed URL.
    expect(error.message).toContain('postgres://crawlq:***@bad host/db');
    expect(error.message).not.toContain('s3cr3t-pw');
    const out = errorOf(() => loadConfig({ flags: { out: 'postgres://u:hidden-pw@ho st/db' } }));
    expect(out.message).not.toContain('hidden-pw');
    expect(errorOf(() => loadConfig({ flags: { databaseUrl: 'mysql://u:p@h/db' } })).option).toBe('--database-url');
  });

  it('rejects sink options that contradict each other', () => {
    expect(errorOf(() => loadConfig({ flags: { sink: 'postgres' } })).message).toContain('postgres needs --database-url');
    expect(errorOf(() => loadConfig({ flags: { sink: 'jsonl', out: 'postgres://db/x' } })).option).toBe('--out');
    expect(errorOf(() => loadConfig({ flags: { sink: 'csv' } })).option).toBe('--sink');
  });
});
