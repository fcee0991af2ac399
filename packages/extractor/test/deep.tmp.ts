import { extractPage } from '@crawlq/extractor';
for (const d of [10_000, 100_000, 300_000]) {
  const html = `<title>x</title>${'<div><span>'.repeat(d)}<a href="/x">t</a>`;
  const t = performance.now();
  const p = extractPage({ body: Buffer.from(html), url: 'http://e.com/', fields: [{ name: 'n', selector: 'div span a' }, { name: 'b', selector: 'div', all: true }] });
  console.log(d, html.length, p.links, p.fields.n, (p.fields.b as string[]).length, (performance.now() - t).toFixed(0), 'ms');
}
