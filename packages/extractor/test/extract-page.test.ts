import { describe, expect, it } from 'vitest';
import { InvalidFieldRuleError, extractPage, validateFieldRules } from '@crawlq/extractor';
import type { ExtractInput } from '@crawlq/extractor';
import { samplePage } from './sample-page.js';

const PAGE_URL = 'https://example.com/dir/page.html';

function extract(html: string, extra: Partial<ExtractInput> = {}) {
  return extractPage({ body: Buffer.from(html, 'utf8'), url: PAGE_URL, ...extra });
}

describe('document metadata', () => {
  it('reads title, description, canonical and lang', () => {
    const page = extract(`<!doctype html><html lang=" de-CH "><head>
      <title>
        Hello   &amp;
        welcome </title>
      <META NAME="Description" CONTENT="  A  page
        about things ">
      <link rel="alternate canonical" href="/canon/../canonical#x">
      </head><body></body></html>`);
    expect(page.title).toBe('Hello & welcome');
    expect(page.description).toBe('A page about things');
    expect(page.canonical).toBe('https://example.com/canonical');
    expect(page.lang).toBe('de-CH');
  });

  it('returns nulls when metadata is missing or blank, and skips an SVG title', () => {
    const page = extract('<html><body><svg><title>tooltip</title></svg><title> </title><p>x</p></body></html>');
    expect(page.title).toBeNull();
    expect(page.description).toBeNull();
    expect(page.canonical).toBeNull();
    expect(page.lang).toBeNull();
    expect(extract('<svg><title>tooltip</title></svg><title>Real</title>').title).toBe('Real');
  });

  it('extracts the sample page completely', () => {
    const page = extract(samplePage(), { url: 'https://news.example.com/articles/sample' });
    expect(page.title).toBe('Sample article & more | Example News');
    expect(page.canonical).toBe('https://news.example.com/articles/sample');
    expect(page.lang).toBe('en-GB');
    expect(page.links).toHaveLength(100);
    expect(page.links[0]).toBe('https://news.example.com/section/0/');
    // Tracking parameter stripped, &amp; decoded.
    expect(page.links).toContain('https://other-0.example.org/path?ref=a');
    // Seven article links carry rel=nofollow.
    expect(page.followLinks).toHaveLength(93);
    expect(page.invalidLinks).toBe(0);
  });
});

describe('links', () => {
  it('resolves relative links against the page URL, in document order, unique', () => {
    const page = extract(`<body>
      <a href="other.html">1</a>
      <a href="../up/">2</a>
      <a href="/abs?b=2&amp;a=1#frag">3</a>
      <a href="other.html#section">dup</a>
      <a href="//cdn.example.net/x">4</a>
      <a href="HTTPS://EXAMPLE.com:443/dir/other.html">dup</a>
      <a href="?q=1">5</a>
      <a href="#top">6</a>
    </body>`);
    expect(page.links).toEqual([
      'https://example.com/dir/other.html',
      'https://example.com/up/',
      'https://example.com/abs?b=2&a=1',
      'https://cdn.example.net/x',
      'https://example.com/dir/page.html?q=1',
      'https://example.com/dir/page.html',
    ]);
  });

  it('honours <base href>, itself relative to the page', () => {
    const page = extract(`<head><base href="/base/sub/"></head><body>
      <a href="a.html">a</a><a href="../b.html">b</a><a href="https://x.example/">c</a></body>`);
    expect(page.links).toEqual([
      'https://example.com/base/sub/a.html',
      'https://example.com/base/b.html',
      'https://x.example/',
    ]);
  });

  it('ignores a <base href> that is not http(s)', () => {
    const page = extract('<base href="javascript:alert(1)"><a href="a.html">a</a>');
    expect(page.links).toEqual(['https://example.com/dir/a.html']);
  });

  it('includes <area href> links, in document order with <a>', () => {
    const page = extract(`<body><a href="/first">1</a>
      <map name="m"><area shape="rect" coords="0,0,1,1" href="/area-link" alt="x"><area nohref alt="y"></map>
      <a href="/last">2</a></body>`);
    expect(page.links).toEqual([
      'https://example.com/first',
      'https://example.com/area-link',
      'https://example.com/last',
    ]);
  });

  it('drops non-http schemes and empty hrefs without counting them, and counts broken links', () => {
    const page = extract(`<body>
      <a href="mailto:someone@example.com">m</a>
      <a href="javascript:void(0)">j</a>
      <a href="tel:+123">t</a>
      <a href="ftp://example.com/f">f</a>
      <a href="data:text/plain,hi">d</a>
      <a href="">empty</a>
      <a href="   ">blank</a>
      <a>no href</a>
      <a href="http://exa mple.com/">bad host</a>
      <a href="http://a..b/">empty label</a>
      <a href="https://ok.example/">ok</a>
    </body>`);
    expect(page.links).toEqual(['https://ok.example/']);
    expect(page.invalidLinks).toBe(2);
  });

  it('normalises links with the given options', () => {
    const html = '<a href="/p?z=1&a=2&utm_source=x">p</a>';
    expect(extract(html).links).toEqual(['https://example.com/p?z=1&a=2']);
    expect(extract(html, { normalize: { sortQuery: true, stripTracking: false } }).links).toEqual([
      'https://example.com/p?a=2&utm_source=x&z=1',
    ]);
  });

  it('leaves rel=nofollow links out of followLinks', () => {
    const page = extract(`<body>
      <a href="/a">a</a>
      <a href="/b" rel="NoFollow">b</a>
      <a href="/c" rel="external nofollow noopener">c</a>
      <a href="/d" rel="nofollow">d</a><a href="/d">d again, followable</a>
      <area href="/e" rel="nofollow">
    </body>`);
    const all = ['/a', '/b', '/c', '/d', '/e'].map((path) => `https://example.com${path}`);
    expect(page.links).toEqual(all);
    expect(page.followLinks).toEqual(['https://example.com/a', 'https://example.com/d']);
    expect(page.noindex).toBe(false);
  });

  it.each([
    ['nofollow', false, true],
    ['NOINDEX', true, false],
    ['noindex, nofollow', true, true],
    ['none', true, true],
    ['index,follow', false, false],
  ])('meta robots %j -> noindex %s, nofollow %s', (content, noindex, nofollow) => {
    const page = extract(`<head><meta name="ROBOTS" content="${content}"></head><body><a href="/x">x</a></body>`);
    expect(page.noindex).toBe(noindex);
    expect(page.links).toEqual(['https://example.com/x']);
    expect(page.followLinks).toEqual(nofollow ? [] : ['https://example.com/x']);
  });

  it('ignores meta tags for other robots names', () => {
    const page = extract('<meta name="description" content="noindex, nofollow"><a href="/x">x</a>');
    expect(page.noindex).toBe(false);
    expect(page.followLinks).toEqual(['https://example.com/x']);
  });
});

describe('field rules', () => {
  const html = `<body>
    <h1 class="t">  The <em>headline</em>  </h1>
    <div class="price" data-amount="9.99">€9.99</div>
    <ul><li class="tag">a</li><li class="tag"> b </li><li class="tag">c</li></ul>
    <img src="/1.png"><img><img src="/2.png">
  </body>`;

  it('extracts text, attributes and all matches', () => {
    const page = extract(html, {
      fields: [
        { name: 'headline', selector: 'h1.t' },
        { name: 'amount', selector: '.price', attribute: 'data-amount' },
        { name: 'tags', selector: 'li.tag', all: true },
        { name: 'firstTag', selector: 'li.tag' },
        { name: 'images', selector: 'img', attribute: 'src', all: true },
        { name: 'missing', selector: '.nope' },
        { name: 'missingAll', selector: '.nope', all: true },
        { name: 'missingAttribute', selector: 'h1', attribute: 'title' },
      ],
    });
    expect(page.fields).toEqual({
      headline: 'The headline',
      amount: '9.99',
      tags: ['a', 'b', 'c'],
      firstTag: 'a',
      images: ['/1.png', '/2.png'],
      missing: null,
      missingAll: [],
      missingAttribute: null,
    });
  });

  it('throws InvalidFieldRuleError for a selector that does not compile', () => {
    let thrown: unknown;
    try {
      extract(html, { fields: [{ name: 'broken', selector: 'div[' }] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidFieldRuleError);
    expect(thrown).toMatchObject({ name: 'InvalidFieldRuleError', field: 'broken', selector: 'div[', retryable: false });
    expect((thrown as Error).cause).toBeDefined();
  });

  it('validateFieldRules accepts good selectors and names the first bad rule', () => {
    expect(() => validateFieldRules([{ name: 'ok', selector: 'h1.t, li:nth-child(2) > a[href^="/"]' }])).not.toThrow();
    expect(() =>
      validateFieldRules([
        { name: 'ok', selector: 'h1' },
        { name: 'bad', selector: 'a[[' },
      ]),
    ).toThrow(expect.objectContaining({ name: 'InvalidFieldRuleError', field: 'bad' }) as Error);
  });
});

describe('hostile documents', () => {
  it('survives unclosed and misnested tags', () => {
    const page = extract('<html><head><title>Broken</title><body><div><p><a href="/a">a<b><i></b></i><a href="/b"><table><tr><td><a href="/c">');
    expect(page.links).toEqual(['https://example.com/a', 'https://example.com/b', 'https://example.com/c']);
  });

  it('survives 10k nested divs, including a field that reads all their text', () => {
    const depth = 10_000;
    const html = `<title>Deep</title><body>${'<div>'.repeat(depth)}<a href="/deep">deep text</a>${'</div>'.repeat(depth)}</body>`;
    const page = extract(html, { fields: [{ name: 'body', selector: 'body' }] });
    expect(page.title).toBe('Deep');
    expect(page.links).toEqual(['https://example.com/deep']);
    expect(page.fields.body).toBe('deep text');
  });

  it('finishes on 300k unclosed tags (parsed in slices)', { timeout: 30_000 }, () => {
    // About 1.5 s here. Parsed whole, htmlparser2 needs about a minute for
    // this (its open-element stack uses unshift), so the timeout catches a
    // regression to unsliced parsing with a wide margin for a busy machine.
    const html = `<title>Fonts</title>${'<font size=2>x'.repeat(300_000)}<a href="/end">end</a>`;
    const page = extract(html, { fields: [{ name: 'fonts', selector: 'font', all: true, attribute: 'size' }, { name: 'last', selector: 'font:last-child', attribute: 'size' }] });
    expect(page.title).toBe('Fonts');
    expect(page.links).toEqual(['https://example.com/end']);
    // 300,000 matches; the record keeps RECORD_CAPS.fieldValues of them and says so.
    expect(page.fields.fonts).toHaveLength(1_000);
    expect(page.truncated).toEqual(['fields.fonts']);
    expect(page.fields.last).toBe('2');
  });

  it('does not let a self-closed or unclosed <script> disable slicing', { timeout: 30_000 }, () => {
    const html = `<script/>${'<b>'.repeat(100_000)}<a href="/a">a</a><script>${'<i>'.repeat(100_000)}<a href="/b">`;
    const page = extract(html);
    // htmlparser2 honours <script/>, so /a is markup. What follows the
    // never-closed <script> is text to the parser, but a forced cut inside it
    // may read the rest as markup: the price of bounded work.
    expect(page.links[0]).toBe('https://example.com/a');
  });

  it('parses a large ordinary page in slices without losing or inventing links', () => {
    const items = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `<li><a href="/item/${from + i}">item ${from + i}</a></li>`).join('\n');
    // 2,000 items = 4,000 open tags; the script then holds 3,000 tag-like
    // strings, across the 5,000th tag where a cut is due: it must not be
    // cut there, or its strings would become links.
    const script = `<script>var html = '${'<i>'.repeat(3_000)}<a href="/from-script">';</script>`;
    const comment = `<!-- ${'<b>'.repeat(3_000)} <a href="/from-comment"> -->`;
    const body = [items(0, 2_000), script, items(2_000, 4_500), comment, items(4_500, 12_000)].join('\n');
    const page = extract(`<html lang="en"><head><title>Big</title></head><body><ul>${body}</ul></body></html>`, {
      fields: [
        { name: 'items', selector: 'li', all: true },
        { name: 'lastItem', selector: 'li > a[href="/item/11999"]', attribute: 'href' },
        { name: 'lastNested', selector: 'ul > li > a[href="/item/11999"]', attribute: 'href' },
      ],
    });
    expect(page.title).toBe('Big');
    expect(page.lang).toBe('en');
    expect(page.links).toHaveLength(12_000);
    expect(page.links[0]).toBe('https://example.com/item/0');
    expect(page.links.at(-1)).toBe('https://example.com/item/11999');
    expect(page.links.some((link) => link.includes('from-'))).toBe(false);
    // 12,000 matches; the record keeps RECORD_CAPS.fieldValues of them.
    expect(page.fields.items).toHaveLength(1_000);
    expect(page.truncated).toEqual(['fields.items']);
    expect(page.fields.lastItem).toBe('/item/11999');
    // Documented cost of slicing: later slices lose their enclosing <ul>.
    expect(page.fields.lastNested).toBeNull();
  });

  it('survives a huge attribute and a huge href', () => {
    const huge = 'x'.repeat(5_000_000);
    const page = extract(`<title>T</title><div data-x="${huge}"></div><a href="/${huge}">big</a><a href="/ok">ok</a>`);
    expect(page.title).toBe('T');
    expect(page.links).toEqual(['https://example.com/ok']);
    expect(page.invalidLinks).toBe(1);
  });

  it('survives binary garbage and an empty body', () => {
    const garbage = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 7919) % 256));
    expect(() => extractPage({ body: garbage, url: PAGE_URL })).not.toThrow();
    const empty = extractPage({ body: Buffer.alloc(0), url: PAGE_URL });
    expect(empty).toMatchObject({ title: null, links: [], followLinks: [], charset: 'utf-8', invalidLinks: 0 });
  });
});
