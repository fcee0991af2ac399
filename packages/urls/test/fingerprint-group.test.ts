import { describe, expect, it } from 'vitest';
import { InvalidUrlError, domainOf, groupKeyOf, normalizeUrl, urlFingerprint } from '@crawlq/urls';

describe('urlFingerprint', () => {
  it('is stable, 23 characters of base64url starting with a letter', () => {
    const url = 'https://example.com/a?b=1';
    const id = urlFingerprint(url);
    expect(id).toBe(urlFingerprint(url));
    // A fixed value: changing the hash would orphan every stored seen-set member.
    // = 'u' + first 22 chars of: printf %s URL | openssl dgst -sha256 -binary | base64url
    expect(id).toBe('ubLVHrHPuI7ehWCNi5fgUMY');
    expect(id).toMatch(/^u[A-Za-z0-9_-]{22}$/);
  });

  it('differs for different URLs and never contains ":" or is all digits', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = urlFingerprint(`https://example.com/page/${i}`);
      expect(id).not.toContain(':');
      expect(id).not.toMatch(/^\d+$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
  });

  it('is the same for equivalent spellings once normalised', () => {
    expect(urlFingerprint(normalizeUrl('HTTP://User@Example.com:80/a/./b#x'))).toBe(
      urlFingerprint(normalizeUrl('http://example.com/a/b')),
    );
  });
});

describe('groupKeyOf', () => {
  it.each([
    ['https://a.b.example.co.uk/x', 'a.b.example.co.uk', 'example.co.uk'],
    ['http://WWW.Example.com/', 'www.example.com', 'example.com'],
    ['http://example.com:8080/', 'example.com:8080', 'example.com'],
    ['https://example.com:443/', 'example.com', 'example.com'],
    ['http://127.0.0.1:3000/', '127.0.0.1:3000', '127.0.0.1'],
    ['http://[::1]:3000/', '[::1]:3000', '[::1]'],
    ['http://localhost/', 'localhost', 'localhost'],
    ['http://a.b.unknowntld/', 'a.b.unknowntld', 'a.b.unknowntld'],
    ['https://alice.github.io/', 'alice.github.io', 'alice.github.io'],
    ['https://x.alice.github.io/', 'x.alice.github.io', 'alice.github.io'],
    ['http://Bücher.example/', 'xn--bcher-kva.example', 'xn--bcher-kva.example'],
  ])('%s -> host %s, domain %s', (url, host, domain) => {
    expect(groupKeyOf(url, 'host')).toBe(host);
    expect(groupKeyOf(url, 'domain')).toBe(domain);
  });

  it('escapes characters that could break a Redis key or hash tag', () => {
    // The WHATWG parser accepts braces and '*' in host names.
    const key = groupKeyOf('http://a{b}*.example.com/', 'host');
    expect(key).toBe('a%7Bb%7D%2A.example.com');
    expect(key).toMatch(/^[a-z0-9._~:[\]%A-F-]+$/);
  });

  it('throws InvalidUrlError for unparseable input', () => {
    expect(() => groupKeyOf('not a url', 'host')).toThrow(InvalidUrlError);
  });

  it('domainOf falls back to the host name', () => {
    expect(domainOf('co.uk')).toBe('co.uk');
    expect(domainOf('10.0.0.1')).toBe('10.0.0.1');
    expect(domainOf('shop.example.com')).toBe('example.com');
  });
});
