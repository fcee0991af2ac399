/**
 * Not a test: throughput of fingerprint hashes and of tryNormalizeUrl.
 * Run: node --conditions=@crawlq/source --import tsx test/url-speed.bench.ts
 */
import { hash } from 'node:crypto';
import { tryNormalizeUrl, urlFingerprint } from '@crawlq/urls';

const urls = Array.from(
  { length: 20_000 },
  (_, i) => `https://www.example-${i % 97}.com/path/to/page-${i}?q=${i}&sort=asc`,
);
const relative = urls.map((_, i) => (i % 3 === 0 ? `../page-${i}?utm_source=x&id=${i}` : `/a/b/${i}#top`));

function measure(name: string, run: (url: string, index: number) => unknown): void {
  const rounds = 10;
  let best = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    const start = process.hrtime.bigint();
    for (let r = 0; r < rounds; r++) urls.forEach((url, index) => run(url, index));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    best = Math.max(best, (rounds * urls.length) / seconds);
  }
  console.log(`${name.padEnd(36)} ${(best / 1e6).toFixed(2)} M/s (best of 3)`);
}

measure('sha256 one-shot, 22 chars', (url) => hash('sha256', url, 'base64url').slice(0, 22));
measure('md5 one-shot, 22 chars', (url) => hash('md5', url, 'base64url'));
measure('urlFingerprint', (url) => urlFingerprint(url));
measure('tryNormalizeUrl absolute', (url) => tryNormalizeUrl(url));
measure('tryNormalizeUrl relative + base', (url, index) => tryNormalizeUrl(relative[index] ?? '', { base: url }));
