import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpaSite, type SpaSite } from '../src/index.js';

const linksOf = (html: string): string[] => [...html.matchAll(/href="([^"]+)"/g)].map((match) => match[1] ?? '');

describe('the single-page-app fixture’s static pages', () => {
  let chain: SpaSite;
  let tree: SpaSite;
  beforeAll(async () => {
    chain = await startSpaSite({ appHost: '127.0.0.1', scriptHost: '127.0.0.1', staticHost: '127.0.0.1', staticPages: 10 });
    tree = await startSpaSite({ appHost: '127.0.0.1', scriptHost: '127.0.0.1', staticHost: '127.0.0.1', staticPages: 10, staticFanOut: 3 });
  });
  afterAll(async () => {
    await chain?.close();
    await tree?.close();
  });
  const read = async (site: SpaSite, index: number) => linksOf(await (await fetch(`${site.staticOrigin}/s/${index}`)).text());

  it('form a chain by default: each page links the next two', async () => {
    expect(await read(chain, 0)).toEqual(['/s/1', '/s/2']);
    expect(await read(chain, 9)).toEqual(['/s/0', '/s/1']);
  });

  it('form a k-ary tree with staticFanOut: every page is linked from exactly one other', async () => {
    expect(await read(tree, 0)).toEqual(['/s/1', '/s/2', '/s/3']);
    expect(await read(tree, 2)).toEqual(['/s/7', '/s/8', '/s/9']);
    expect(await read(tree, 3)).toEqual([]);
    const linked = (await Promise.all(Array.from({ length: 10 }, (_, index) => read(tree, index)))).flat();
    expect(linked.sort()).toEqual(Array.from({ length: 9 }, (_, index) => `/s/${index + 1}`).sort());
  });
});
