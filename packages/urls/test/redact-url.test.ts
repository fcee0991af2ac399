import { describe, expect, it } from 'vitest';
import { InvalidUrlError, redactText, redactUrl, withoutUserinfo } from '../src/index.js';

describe('redaction: the one owner (#10)', () => {
  it('strips userinfo and secret query values, leaves other URLs untouched', () => {
    expect(redactUrl('https://u:p@x.test/a?b=1')).toBe('https://x.test/a?b=1');
    expect(redactUrl('https://x.test/a?API_KEY=1&sig=2&q=ok')).toBe('https://x.test/a?API_KEY=***&sig=***&q=ok');
    expect(redactUrl('https://x.test/%7Euser/a%20b')).toBe('https://x.test/%7Euser/a%20b');
    expect(redactUrl('https://example.com/a@b')).toBe('https://example.com/a@b');
  });

  it('removes a password that itself holds an @', () => {
    expect(redactUrl('https://user:pa@ss@example.com/x?y=1')).toBe('https://example.com/x?y=1');
    expect(withoutUserinfo('http://u:p@ss@127.0.0.1:8080/x?token=1')).toBe('http://127.0.0.1:8080/x?token=1');
  });

  it('redacts Redis and SMTP URLs, even ones that do not parse', () => {
    expect(redactUrl('redis://user:S3cr3t@host:6380/0')).toBe('redis://host:6380/0');
    expect(redactText('bad value "redis://:S3cr3t@127.0.0.1:99999"')).toBe('bad value "redis://127.0.0.1:99999"');
    expect(redactText('see ftp://me:pw@files.test/x and https://y.test/')).toBe('see ftp://files.test/x and https://y.test/');
  });

  it('keeps credentials out of InvalidUrlError messages', () => {
    const error = new InvalidUrlError('scheme', 'ftp://bob:hunter2@files.test/x');
    expect(error.message).not.toContain('hunter2');
    expect(error.input).toBe('ftp://files.test/x');
  });
});
