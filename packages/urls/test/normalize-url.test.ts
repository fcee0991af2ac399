import { describe, expect, it } from 'vitest';
import { InvalidUrlError, normalizeUrl, tryNormalizeUrl } from '@crawlq/urls';
import type { InvalidUrlReason } from '@crawlq/urls';

const cases: readonly (readonly [input: string, expected: string])[] = [
  // scheme and host case, IDN
  ['HTTP://Example.COM/Path', 'http://example.com/Path'],
  ['http://Bücher.example/', 'http://xn--bcher-kva.example/'],
  ['https://😀.com/', 'https://xn--e28h.com/'],
  ['http://%41.com/', 'http://a.com/'],
  ['http://example.com./a', 'http://example.com/a'],
  // IPv4 notations, IPv6
  ['http://2130706433/', 'http://127.0.0.1/'],
  ['http://0x7f.1/', 'http://127.0.0.1/'],
  ['http://[0:0:0:0:0:0:0:1]:8080/', 'http://[::1]:8080/'],
  // ports
  ['http://example.com:80/', 'http://example.com/'],
  ['https://example.com:443/', 'https://example.com/'],
  ['http://example.com:443/', 'http://example.com:443/'],
  ['https://example.com:8443/x', 'https://example.com:8443/x'],
  // fragments
  ['http://example.com/a#section', 'http://example.com/a'],
  ['http://example.com/#', 'http://example.com/'],
  ['http://example.com/a?b=1#c?d', 'http://example.com/a?b=1'],
  // credentials
  ['http://user:secret@example.com/', 'http://example.com/'],
  ['https://user@example.com:443/a', 'https://example.com/a'],
  // dot segments, empty path
  ['http://example.com/a/./b/../c', 'http://example.com/a/c'],
  ['http://example.com/a/%2e%2E/b/%2E/c', 'http://example.com/b/c'],
  ['http://example.com/../../x', 'http://example.com/x'],
  ['http://example.com', 'http://example.com/'],
  ['http://example.com?', 'http://example.com/'],
  // percent-encoding
  ['http://example.com/%7euser/%41%62%2d%2E%5f', 'http://example.com/~user/Ab-._'],
  ['http://example.com/a%2fb%c3%bc', 'http://example.com/a%2Fb%C3%BC'],
  ['http://example.com/ü path', 'http://example.com/%C3%BC%20path'],
  ['http://example.com/?q=%7e%3d%3D a', 'http://example.com/?q=~%3D%3D%20a'],
  ['http://example.com/100%', 'http://example.com/100%'],
  // tracking parameters
  ['http://example.com/?utm_source=x&id=1&utm_medium=y', 'http://example.com/?id=1'],
  ['http://example.com/?gclid=1&fbclid=2&mc_cid=3&mc_eid=4&msclkid=5', 'http://example.com/'],
  ['http://example.com/?UTM_Campaign=x&a=1', 'http://example.com/?a=1'],
  ['http://example.com/?utm%5Fsource=x&a=1', 'http://example.com/?a=1'],
  ['http://example.com/?a=1&&utm_x=2&b', 'http://example.com/?a=1&b'],
  ['http://example.com/?utmost=1', 'http://example.com/?utmost=1'],
  ['http://example.com/?z=1&a=2&z=0', 'http://example.com/?z=1&a=2&z=0'],
  // whitespace and backslashes
  ['  \thttp://example.com/a\n ', 'http://example.com/a'],
  ['https:\\\\example.com\\a\\b', 'https://example.com/a/b'],
  ['http://ex_ample.com/', 'http://ex_ample.com/'],
];

describe('normalizeUrl', () => {
  it.each(cases)('%s -> %s', (input, expected) => {
    expect(normalizeUrl(input)).toBe(expected);
  });

  it('is idempotent on every table entry', () => {
    for (const [, expected] of cases) expect(normalizeUrl(expected)).toBe(expected);
  });

  it('resolves relative links against a base', () => {
    const base = 'https://example.com/dir/page.html?x=1';
    expect(normalizeUrl('other.html', { base })).toBe('https://example.com/dir/other.html');
    expect(normalizeUrl('../up', { base })).toBe('https://example.com/up');
    expect(normalizeUrl('/abs#frag', { base })).toBe('https://example.com/abs');
    expect(normalizeUrl('?y=2', { base })).toBe('https://example.com/dir/page.html?y=2');
    expect(normalizeUrl('//cdn.example.net/a', { base })).toBe('https://cdn.example.net/a');
    expect(normalizeUrl('http://other.example/', { base })).toBe('http://other.example/');
  });

  it('keeps tracking parameters when stripTracking is false', () => {
    expect(normalizeUrl('http://example.com/?utm_source=x', { stripTracking: false })).toBe(
      'http://example.com/?utm_source=x',
    );
  });

  it('sorts query parameters stably by name with sortQuery', () => {
    expect(normalizeUrl('http://example.com/?z=1&a=2&z=0&m&utm_source=q', { sortQuery: true })).toBe(
      'http://example.com/?a=2&m&z=1&z=0',
    );
  });

  it('honours maxLength on the normalised result', () => {
    const url = `http://example.com/${'a'.repeat(100)}`;
    expect(normalizeUrl(url, { maxLength: url.length })).toBe(url);
    expect(() => normalizeUrl(url, { maxLength: url.length - 1 })).toThrow(InvalidUrlError);
    // Measured after stripping: the tracking parameter does not count.
    expect(normalizeUrl(`${url}?utm_source=${'x'.repeat(50)}`, { maxLength: url.length })).toBe(url);
    expect(tryNormalizeUrl(`http://example.com/${'a'.repeat(2048)}`)).toMatchObject({ ok: false, reason: 'too-long' });
  });
});

describe('rejections', () => {
  const rejected: readonly (readonly [input: string, reason: InvalidUrlReason])[] = [
    ['', 'empty'],
    ['   \n\t', 'empty'],
    ['mailto:someone@example.com', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['ftp://example.com/file', 'scheme'],
    ['data:text/html,hi', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['example.com/no-scheme', 'malformed'],
    ['http://', 'malformed'],
    ['http://exa mple.com/', 'malformed'],
    ['http://a%00b/', 'malformed'],
    ['http://xn--/', 'malformed'],
    ['http://[::1/', 'malformed'],
    ['http://a{b}.com/', 'host'],
    ['http://a..b/', 'host'],
    [`http://${'a'.repeat(64)}.com/`, 'host'],
    [`http://${'abcdefghi.'.repeat(26)}com/`, 'host'],
  ];

  it.each(rejected)('%j is refused as %s', (input, reason) => {
    const result = tryNormalizeUrl(input);
    expect(result).toMatchObject({ ok: false, reason });
    if (!result.ok) expect(result.message).not.toBe('');
    let thrown: unknown;
    try {
      normalizeUrl(input);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidUrlError);
    const error = thrown as InvalidUrlError;
    expect(error.name).toBe('InvalidUrlError');
    expect(error.reason).toBe(reason);
    expect(error.retryable).toBe(false);
    expect(error.input.startsWith(input.slice(0, 200))).toBe(true);
  });

  it('refuses a relative link without a base and a non-http link with one', () => {
    expect(tryNormalizeUrl('/path')).toMatchObject({ ok: false, reason: 'malformed' });
    expect(tryNormalizeUrl('mailto:x@example.com', { base: 'http://example.com/' })).toMatchObject({
      ok: false,
      reason: 'scheme',
    });
  });

  it('keeps huge inputs out of error messages', () => {
    const input = `ftp://example.com/${'x'.repeat(100_000)}`;
    const result = tryNormalizeUrl(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message.length).toBeLessThan(200);
    try {
      normalizeUrl(input);
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidUrlError).input.length).toBeLessThanOrEqual(201);
    }
  });
});
