import { describe, expect, it } from 'vitest';
import { InvalidPatternError, InvalidUrlError, createScopeFilter, parsePattern } from '@crawlq/urls';

describe('createScopeFilter modes', () => {
  const seeds = ['https://www.example.co.uk/start', 'http://Blog.Example.org:8080/'];

  it('host: same host as any seed, port included', () => {
    const inScope = createScopeFilter({ mode: 'host', seeds });
    expect(inScope('https://www.example.co.uk/other')).toBe(true);
    expect(inScope('http://www.example.co.uk/other')).toBe(true);
    expect(inScope('http://blog.example.org:8080/x')).toBe(true);
    expect(inScope('http://blog.example.org/x')).toBe(false);
    expect(inScope('https://shop.example.co.uk/')).toBe(false);
    expect(inScope('https://example.co.uk/')).toBe(false);
    expect(inScope('https://other.com/')).toBe(false);
  });

  it('domain: same registrable domain as any seed', () => {
    const inScope = createScopeFilter({ mode: 'domain', seeds });
    expect(inScope('https://shop.example.co.uk/')).toBe(true);
    expect(inScope('https://example.co.uk/')).toBe(true);
    expect(inScope('https://a.b.example.org/')).toBe(true);
    expect(inScope('https://example.com/')).toBe(false);
    expect(inScope('https://other.co.uk/')).toBe(false);
  });

  it('any: every http(s) URL', () => {
    const inScope = createScopeFilter({ mode: 'any', seeds: [] });
    expect(inScope('https://anything.example/')).toBe(true);
    expect(inScope('ftp://example.com/')).toBe(false);
    expect(inScope('not a url')).toBe(false);
  });

  it('never throws on bad input', () => {
    const inScope = createScopeFilter({ mode: 'host', seeds });
    expect(inScope('')).toBe(false);
    expect(inScope('http://')).toBe(false);
  });

  it('refuses bad seeds and host/domain scopes without seeds', () => {
    expect(() => createScopeFilter({ mode: 'host', seeds: ['mailto:a@b.c'] })).toThrow(InvalidUrlError);
    expect(() => createScopeFilter({ mode: 'domain', seeds: [] })).toThrow(InvalidPatternError);
  });
});

describe('include and exclude', () => {
  it('glob include and exclude', () => {
    const inScope = createScopeFilter({
      mode: 'host',
      seeds: ['https://example.com/'],
      include: ['https://example.com/blog/*', 'https://example.com/docs/**'],
      exclude: ['*/drafts/*', '*?print=1'],
    });
    expect(inScope('https://example.com/blog/post-1')).toBe(true);
    expect(inScope('https://example.com/docs/a/b/c')).toBe(true);
    expect(inScope('https://example.com/about')).toBe(false);
    expect(inScope('https://example.com/blog/drafts/x')).toBe(false);
    expect(inScope('https://example.com/blog/post-1?print=1')).toBe(false);
    // '?' in a glob is literal, not "any character".
    expect(inScope('https://example.com/blog/post-1Xprint=1')).toBe(true);
  });

  it('regex strings and RegExp objects', () => {
    const inScope = createScopeFilter({
      mode: 'any',
      seeds: [],
      include: ['/\\/(en|de)\\//i', /\/static\//g],
      exclude: [/\.pdf$/],
    });
    expect(inScope('https://example.com/EN/page')).toBe(true);
    expect(inScope('https://example.com/de/page')).toBe(true);
    expect(inScope('https://example.com/fr/page')).toBe(false);
    expect(inScope('https://example.com/en/file.pdf')).toBe(false);
    // A /g RegExp is used without state: the same URL matches every time.
    for (let i = 0; i < 3; i++) expect(inScope('https://example.com/static/a.css')).toBe(true);
  });
});

describe('parsePattern', () => {
  it('globs match the whole URL; * crosses slashes; regex specials are literal', () => {
    const glob = parsePattern('https://example.com/a.b/*');
    expect(glob.test('https://example.com/a.b/x/y')).toBe(true);
    expect(glob.test('https://example.com/aXb/x')).toBe(false);
    expect(glob.test('prefix https://example.com/a.b/x')).toBe(false);
    expect(parsePattern('*').test('anything at all')).toBe(true);
    expect(parsePattern('http://x/(a)+[b]').test('http://x/(a)+[b]')).toBe(true);
  });

  it('/regex/flags compiles with flags, minus g and y', () => {
    const regex = parsePattern('/^https:\\/\\/EXAMPLE/gyi');
    expect(regex.flags).toBe('i');
    expect(regex.test('https://example.com/')).toBe(true);
  });

  it('throws InvalidPatternError for a broken regex', () => {
    expect(() => parsePattern('/(unclosed/')).toThrow(InvalidPatternError);
    try {
      parsePattern('/(unclosed/');
    } catch (error) {
      expect(error).toMatchObject({ name: 'InvalidPatternError', pattern: '/(unclosed/', retryable: false });
      expect((error as Error).cause).toBeInstanceOf(SyntaxError);
    }
  });
});
