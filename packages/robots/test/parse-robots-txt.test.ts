import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { canonicalPath, isPathAllowed, parseRobotsTxt, productTokenOf, RobotsOptionsError } from '../src/index.js';
import { decodeRobotsBody } from '../src/decode-robots-body.js';
import { compileRule, ruleMatches } from '../src/robots-rule.js';

const require = createRequire(import.meta.url);
// robots-parser 3.0.1 as an oracle for ordinary files (see the comparison test).
const robotsParser = require('robots-parser') as (
  url: string,
  text: string,
) => { isAllowed(url: string, ua?: string): boolean | undefined; getCrawlDelay(ua?: string): number | undefined };

function allows(text: string, path: string, token = 'crawlq'): boolean {
  return isPathAllowed(parseRobotsTxt(text, token), canonicalPath(path));
}

describe('product tokens', () => {
  it('takes the leading letters, "_" and "-" of the User-Agent, lower-cased', () => {
    expect(productTokenOf('CrawlQ/0.1 (+https://example.com/bot)')).toBe('crawlq');
    expect(productTokenOf('my_bot-x 2.0')).toBe('my_bot-x');
    expect(() => productTokenOf('/0.1 nothing')).toThrow(RobotsOptionsError);
  });
});

describe('group selection (RFC 9309 2.2.1)', () => {
  const text = [
    'User-agent: *',
    'Disallow: /',
    '',
    'User-agent: CrawlQ/2.0',
    'Disallow: /private',
    '',
    'User-agent: other',
    'Allow: /',
  ].join('\n');

  it('uses the group naming our token (case-insensitively) and ignores the * group', () => {
    expect(allows(text, '/public')).toBe(true);
    expect(allows(text, '/private/x')).toBe(false);
  });

  it('falls back to the * group for a token no group names', () => {
    expect(allows(text, '/public', 'nobody')).toBe(false);
  });

  it('allows everything when no group applies', () => {
    expect(allows('User-agent: other\nDisallow: /\n', '/x')).toBe(true);
  });

  it('merges every group naming us, and groups listing several agents', () => {
    const merged = 'User-agent: crawlq\nDisallow: /a\n\nUser-agent: x\nDisallow: /b\n\nUser-agent: y\nUser-agent: crawlq\nDisallow: /c\n';
    expect([allows(merged, '/a'), allows(merged, '/b'), allows(merged, '/c')]).toEqual([false, true, false]);
  });

  it('matches the leading token of a User-agent value ("crawlq bot" names crawlq)', () => {
    expect(allows('User-agent: crawlq bot\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n', '/y')).toBe(true);
  });

  it('a group naming us with no rules allows everything, even when * disallows', () => {
    expect(allows('User-agent: *\nDisallow: /\n\nUser-agent: crawlq\nDisallow:\n', '/x')).toBe(true);
  });

  it('ignores rules before any User-agent, and unknown records do not end a group', () => {
    const text = 'Disallow: /early\nUser-agent: x\nFoo: bar\nUser-agent: crawlq\nDisallow: /late\n';
    expect(allows(text, '/early')).toBe(true);
    expect(allows(text, '/late')).toBe(false);
  });

  it('Sitemap lines are global and do not split a group', () => {
    const parsed = parseRobotsTxt('User-agent: a\nSitemap: /s.xml\nUser-agent: crawlq\nDisallow: /x\nSitemap: https://e.test/2.xml', 'crawlq');
    expect(parsed.sitemaps).toEqual(['/s.xml', 'https://e.test/2.xml']);
    expect(isPathAllowed(parsed, '/x')).toBe(false);
  });
});

describe('rule precedence and patterns (RFC 9309 2.2.2)', () => {
  const text = [
    'User-agent: crawlq',
    'Disallow: /shop',
    'Allow: /shop/public',
    'Disallow: /shop/public/secret',
    'Allow: /page',
    'Disallow: /page',
    'Disallow: /*.pdf$',
    'Disallow: /search*q=',
    'Allow: /tilde/%7Eme',
    'Disallow: /tilde',
    'Disallow: /caf\u00e9',
  ].join('\n');

  it.each([
    ['/shop/cart', false],
    ['/shop/public/x', true],
    ['/shop/public/secret/y', false],
    ['/page', true], // equally long: Allow wins
    ['/files/a.pdf', false],
    ['/files/a.pdf?x=1', true], // $ anchors at the end of path and query
    ['/search?a=1&q=x', false],
    ['/search?a=1', true],
    ['/tilde/~me', true], // %7E in the pattern is ~
    ['/tilde/other', false],
    ['/caf%C3%A9/menu', false], // non-ASCII pattern compared percent-encoded
    ['/robots.txt', true],
    ['/', true],
  ])('%s -> allowed %s', (path, expected) => {
    expect(allows(text, path)).toBe(expected);
  });

  it('always allows /robots.txt', () => {
    expect(allows('User-agent: *\nDisallow: /\n', '/robots.txt')).toBe(true);
    expect(allows('User-agent: *\nDisallow: /\n', '/robots.txt.bak')).toBe(false);
  });

  it('finds a wildcard match whenever one exists (compared with a regular expression)', () => {
    // Deterministic pseudo-random patterns and paths over a small alphabet, so
    // overlapping parts and backtracking cases come up often.
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const word = (alphabet: string, max: number): string =>
      Array.from({ length: random(max) }, () => alphabet[random(alphabet.length)]).join('');
    let matched = 0;
    for (let i = 0; i < 4000; i += 1) {
      const pattern = `/${word('ab*', 6)}${random(3) === 0 ? '$' : ''}`;
      const path = `/${word('ab', 8)}`;
      const anchored = pattern.endsWith('$');
      const body = (anchored ? pattern.slice(0, -1) : pattern).replace(/\*+/g, '*');
      const regex = new RegExp(`^${body.split('*').join('.*')}${anchored ? '$' : ''}`);
      const expected = regex.test(path);
      if (expected) matched += 1;
      expect(ruleMatches(compileRule(false, pattern), path), `${pattern} vs ${path}`).toBe(expected);
    }
    // Both outcomes were exercised.
    expect(matched).toBeGreaterThan(500);
    expect(matched).toBeLessThan(3500);
  });

  it('agrees with robots-parser on ordinary files', () => {
    const files = [
      'User-agent: *\nDisallow: /admin\nAllow: /admin/public\n',
      'User-agent: crawlq\nDisallow: /\nAllow: /ok$\nAllow: /*.html\n\nUser-agent: *\nAllow: /\n',
      'User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\nDisallow: /*?session=\n',
      'User-agent: CRAWLQ\nDisallow: /a/*/b\nAllow: /a/x/b/c\n',
      '# comment\nUser-agent: *  # all\nDisallow: /x # no x\n',
    ];
    const paths = ['/', '/admin', '/admin/public/1', '/ok', '/ok2', '/p.html', '/tmp/1', '/p?session=3', '/a/x/b', '/a/x/b/c', '/x', '/xy'];
    for (const file of files) {
      const oracle = robotsParser('http://e.test/robots.txt', file);
      for (const path of paths) {
        expect(allows(file, path), `${JSON.stringify(file)} ${path}`).toBe(oracle.isAllowed(`http://e.test${path}`, 'crawlq'));
      }
    }
  });
});

describe('Crawl-delay', () => {
  it('reads seconds, fractional too, from the applying group only', () => {
    expect(parseRobotsTxt('User-agent: crawlq\nCrawl-delay: 2.5\n', 'crawlq').crawlDelaySeconds).toBe(2.5);
    expect(parseRobotsTxt('User-agent: *\nCrawl-delay: 4\n\nUser-agent: crawlq\nDisallow: /x\n', 'crawlq').crawlDelaySeconds).toBeNull();
    expect(parseRobotsTxt('User-agent: *\nCrawl-delay: .5\n', 'crawlq').crawlDelaySeconds).toBe(0.5);
  });

  it('ignores values that are not a non-negative number', () => {
    for (const value of ['-1', 'soon', '1e400x', '', 'Infinity']) {
      expect(parseRobotsTxt(`User-agent: *\nCrawl-delay: ${value}\n`, 'crawlq').crawlDelaySeconds, value).toBeNull();
    }
  });
});

describe('hostile bodies', () => {
  it('strips a BOM and splits CRLF and CR lines', () => {
    const body = Buffer.from('\uFEFFUser-agent: crawlq\r\nDisallow: /crlf\rDisallow: /cr\n');
    const { text } = decodeRobotsBody(body, 1000);
    expect([allows(text, '/crlf'), allows(text, '/cr'), allows(text, '/ok')]).toEqual([false, false, true]);
  });

  it('parses only the first maxBytes and drops the line cut in half', () => {
    const head = 'User-agent: *\nDisallow: /early\n';
    const body = Buffer.from(`${head}Allow: /early/but-this-line-is-cut\n`);
    const { text, truncated } = decodeRobotsBody(body, head.length + 10);
    expect(truncated).toBe(true);
    expect(text).toBe(head);
    expect(allows(text, '/early/but-this-line-is-cut')).toBe(false);
  });

  it('survives binary garbage (invalid UTF-8, NUL bytes, lone surrogates)', () => {
    const garbage = Buffer.alloc(64 * 1024);
    let seed = 7;
    for (let i = 0; i < garbage.length; i += 1) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      garbage[i] = seed % 256;
    }
    const { text } = decodeRobotsBody(Buffer.concat([garbage, Buffer.from('\nUser-agent: *\nDisallow: /after-garbage\n')]), 1e6);
    expect(allows(text, '/after-garbage')).toBe(false);
    expect(allows(`User-agent: *\nDisallow: /\uD800x\n`, '/%EF%BF%BDx')).toBe(false);
  });

  it('decides correctly on a 500 KiB file of wildcard patterns (hostile to table matchers)', () => {
    // robots-parser's matcher costs pattern length x path length per rule: about 3 s
    // per check for this file on the dev machine. Here the verdict must be right;
    // the test timeout bounds the time only loosely.
    let text = 'User-agent: *\n';
    while (text.length < 500 * 1024) text += `Disallow: /${'*a'.repeat(1000)}b\n`;
    const robots = parseRobotsTxt(text, 'crawlq');
    const path = `/${'a'.repeat(2000)}`;
    for (let i = 0; i < 50; i += 1) expect(isPathAllowed(robots, path)).toBe(true);
    expect(isPathAllowed(robots, `${path}b`)).toBe(false);
  }, 10_000);
});

describe('canonicalPath', () => {
  it('decodes unreserved escapes, upper-cases others and encodes what must be encoded', () => {
    expect(canonicalPath('/a%7eb%2fc')).toBe('/a~b%2Fc');
    expect(canonicalPath('/a b|c')).toBe('/a%20b%7Cc');
    expect(canonicalPath('/100%')).toBe('/100%25');
    expect(canonicalPath('/caf\u00e9')).toBe('/caf%C3%A9');
    expect(canonicalPath('/plain/path?q=1&b=*')).toBe('/plain/path?q=1&b=*');
  });
});
