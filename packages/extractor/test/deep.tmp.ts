import { extractPage } from '@crawlq/extractor';
const d = 200_000;
const html = `<title>x</title>${'<div><span>'.repeat(d)}<a href="/x">t</a>`;
const t = performance.now();
const p = extractPage({ body: Buffer.from(html), url: 'http://e.com/', fields: [{ name: 'b', selector: 'body' }, { name: 'c', selector: 'div span a' }] });
console.log(p.links, p.fields, performance.now() - t);
