import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeededRandom, startDemoSite } from '@crawlq/demo-site';
import type { DemoSite, SiteSpec } from '@crawlq/demo-site';

const SPEC: SiteSpec = {
  hosts: ['127.0.0.2', '127.0.0.3'],
  pagesPerHost: 20,
  linksPerPage: 4,
  crossHostLinksPerPage: 2,
  brokenLinksPerPage: 1,
  seed: 7,
};

async function get(url: string, init?: RequestInit): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

/** Page HTML with the port replaced, so two sites on different ports compare equal. */
async function pageWithoutPort(site: DemoSite, host: string, page: number): Promise<string> {
  const { body } = await get(site.urlOf(host, page));
  return body.replaceAll(`:${site.port}/`, ':PORT/');
}

function hrefs(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1]!);
}

describe('generated pages', () => {
  let site: DemoSite;

  beforeAll(async () => {
    site = await startDemoSite(SPEC);
  });
  afterAll(async () => {
    await site.close();
  });

  it('serves every host on the same port, page 0 at / and the others at /p/<n>', () => {
    expect(site.seeds).toEqual([`http://127.0.0.2:${site.port}/`, `http://127.0.0.3:${site.port}/`]);
    expect(site.urlOf('127.0.0.3', 0)).toBe(`http://127.0.0.3:${site.port}/`);
    expect(site.urlOf('127.0.0.3', 19)).toBe(`http://127.0.0.3:${site.port}/p/19`);
    expect(() => site.urlOf('127.0.0.3', 20)).toThrow(/page/);
    expect(() => site.urlOf('127.0.0.9', 1)).toThrow(/host/);
  });

  it('gives every page a title, an h1, links and padding of about pageBytes', async () => {
    const { status, body, headers } = await get(site.urlOf('127.0.0.3', 5));
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(body).toContain('<title>Page 5 on 127.0.0.3</title>');
    expect(body).toContain('<h1 id="top">Page 5 on 127.0.0.3</h1>');
    expect(body).toMatch(/<p class="padding">[A-Za-z ]{1000,}<\/p>/);
    expect(Buffer.byteLength(body)).toBe(2000);
    // 4 same-host + 2 cross-host + 1 broken, plus the footer's #top and mailto: links.
    expect(hrefs(body)).toHaveLength(4 + 2 + 1 + 2);
  });

  it('links page n to page n + 1 and spells links in several forms', async () => {
    const forms = new Set<string>();
    for (let page = 0; page < 20; page += 1) {
      const pageUrl = site.urlOf('127.0.0.2', page);
      const links = hrefs((await get(pageUrl)).body);
      const first = new URL(links[0]!, pageUrl);
      first.hash = '';
      expect(first.href).toBe(site.urlOf('127.0.0.2', (page + 1) % 20));
      for (const href of links) {
        if (href.startsWith('mailto:') || href.startsWith('#')) continue;
        if (href.startsWith('//')) forms.add('protocol-relative');
        else if (href.startsWith('HTTP://')) forms.add('upper-case scheme');
        else if (href.startsWith('http://')) forms.add('absolute');
        else if (href.startsWith('../')) forms.add('parent-relative');
        else if (href.startsWith('/')) forms.add('root-relative');
        else forms.add('document-relative');
        if (href.includes('#')) forms.add('fragment');
      }
    }
    expect(forms).toEqual(
      new Set([
        'protocol-relative',
        'upper-case scheme',
        'absolute',
        'parent-relative',
        'root-relative',
        'document-relative',
        'fragment',
      ]),
    );
  });

  it('is deterministic for a seed and differs for another seed', async () => {
    const twin = await startDemoSite(SPEC);
    const other = await startDemoSite({ ...SPEC, seed: 8 });
    try {
      let differing = 0;
      for (const page of [0, 1, 9, 19]) {
        const html = await pageWithoutPort(site, '127.0.0.3', page);
        expect(await pageWithoutPort(twin, '127.0.0.3', page)).toBe(html);
        if ((await pageWithoutPort(other, '127.0.0.3', page)) !== html) differing += 1;
      }
      expect(differing).toBeGreaterThan(0);
      const relative = (target: DemoSite, url: string): string => url.replace(`:${target.port}/`, ':PORT/');
      const truth = (target: DemoSite): string[] =>
        [...target.reachable({ seeds: target.seeds, maxDepth: 2, scope: 'any' })].map((url) => relative(target, url)).sort();
      expect(truth(twin)).toEqual(truth(site));
      expect(truth(other)).not.toEqual(truth(site));
    } finally {
      await Promise.all([twin.close(), other.close()]);
    }
  });

  it('answers 404 with a small HTML body for missing pages', async () => {
    for (const path of ['/missing/3', '/p/0', '/p/20', '/p/01', '/nothing', '/p/3/']) {
      const { status, body, headers } = await get(`http://127.0.0.2:${site.port}${path}`);
      expect(status, path).toBe(404);
      expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(body).toContain('404 Not Found');
      expect(body.length).toBeLessThan(300);
    }
  });

  it('answers 404 for /robots.txt unless the spec gives one', async () => {
    expect((await get(`http://127.0.0.2:${site.port}/robots.txt`)).status).toBe(404);
    await using withRobots = await startDemoSite({
      ...SPEC,
      robotsTxt: { '127.0.0.3': 'User-agent: *\nDisallow: /p/1\n' },
    });
    const robots = await get(`http://127.0.0.3:${withRobots.port}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(robots.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(robots.body).toBe('User-agent: *\nDisallow: /p/1\n');
    expect((await get(`http://127.0.0.2:${withRobots.port}/robots.txt`)).status).toBe(404);
  });

  it('answers HEAD without a body and other methods with 405', async () => {
    const head = await fetch(site.urlOf('127.0.0.2', 2), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('2000');
    expect(await head.text()).toBe('');
    const post = await fetch(site.urlOf('127.0.0.2', 2), { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    await post.text();
  });

  it('honours pageBytes (padding never shrinks the markup)', async () => {
    await using small = await startDemoSite({ ...SPEC, pageBytes: 0 });
    await using large = await startDemoSite({ ...SPEC, pageBytes: 50_000 });
    const smallPage = (await get(small.urlOf('127.0.0.2', 3))).body;
    expect(smallPage).toContain('<p class="padding"></p>');
    expect(Buffer.byteLength((await get(large.urlOf('127.0.0.2', 3))).body)).toBe(50_000);
  });
});

describe('createSeededRandom', () => {
  it('repeats its sequence for a seed, stays in [0, 1) and differs between seeds', () => {
    const first = createSeededRandom(123);
    const again = createSeededRandom(123);
    const other = createSeededRandom(124);
    const a = Array.from({ length: 1000 }, () => first());
    const b = Array.from({ length: 1000 }, () => again());
    const c = Array.from({ length: 1000 }, () => other());
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    expect(a.every((value) => value >= 0 && value < 1)).toBe(true);
    // Roughly uniform: every tenth of [0, 1) gets a fair share of 1000 draws.
    const buckets = new Array<number>(10).fill(0);
    for (const value of a) buckets[Math.floor(value * 10)]! += 1;
    expect(Math.min(...buckets)).toBeGreaterThan(60);
  });

  it('is pinned: the first values for seed 1 never change (sites must stay reproducible)', () => {
    const random = createSeededRandom(1);
    const values = [random(), random(), random()].map((value) => Math.floor(value * 1e6));
    // The published mulberry32 outputs for seed 1: 0.6270739..., 0.0027354..., 0.5274470...
    expect(values).toEqual([627073, 2735, 527447]);
  });
});
