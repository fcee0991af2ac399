/**
 * Not a test: pages per second for the two parsers cheerio offers, on a
 * realistic ~30 KB page with ~100 links, running the full extraction.
 * Run: node --conditions=@crawlq/source --import tsx test/parser-speed.bench.ts
 */
import { isDeepStrictEqual } from 'node:util';
import { load as loadParse5 } from 'cheerio';
import { load as loadHtmlparser2 } from 'cheerio/slim';
import { extractWithLoader } from '../src/extract-page.js';
import type { ExtractInput } from '../src/extract-page.js';
import type { HtmlLoader } from '../src/parse-html.js';
import { samplePage } from './sample-page.js';

const html = samplePage();
const input: ExtractInput = {
  body: Buffer.from(html),
  contentType: 'text/html; charset=utf-8',
  url: 'https://news.example.com/articles/sample',
  fields: [
    { name: 'headline', selector: 'h1.headline' },
    { name: 'images', selector: 'img', attribute: 'src', all: true },
  ],
};
const parsers: Record<string, HtmlLoader> = {
  parse5: (content) => loadParse5(content as Parameters<typeof loadParse5>[0]),
  htmlparser2: (content) => loadHtmlparser2(content as Parameters<typeof loadHtmlparser2>[0]),
};

const reference = extractWithLoader(input, parsers.parse5!);
console.log(`page: ${html.length} bytes, ${reference.links.length} unique links (${html.match(/<a /g)?.length} <a>)`);
for (const [name, loader] of Object.entries(parsers)) {
  const same = isDeepStrictEqual(extractWithLoader(input, loader), reference);
  console.log(`${name}: extraction ${same ? 'identical to parse5' : 'DIFFERS from parse5'}`);
}

function pagesPerSecond(loader: HtmlLoader): number {
  const seconds = 2;
  for (let i = 0; i < 50; i++) extractWithLoader(input, loader); // warm-up
  const start = performance.now();
  let pages = 0;
  while (performance.now() - start < seconds * 1000) {
    extractWithLoader(input, loader);
    pages++;
  }
  return pages / ((performance.now() - start) / 1000);
}

const results: Record<string, number> = {};
for (let round = 0; round < 3; round++) {
  // Alternate so neither parser always runs on a warmer (or busier) machine.
  for (const [name, loader] of Object.entries(parsers)) {
    results[name] = Math.max(results[name] ?? 0, pagesPerSecond(loader));
  }
}
for (const [name, rate] of Object.entries(results)) console.log(`${name.padEnd(12)} ${rate.toFixed(0)} pages/s (best of 3 x 2 s)`);
console.log(`htmlparser2 / parse5 = ${(results.htmlparser2! / results.parse5!).toFixed(2)}x`);
