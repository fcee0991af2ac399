// The ceiling every crawler bench compares against: breadth-first got + cheerio
// with a Set for dedupe, no queue, no Redis, no politeness.
import { Agent as HttpAgent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import * as cheerio from 'cheerio';
import got, { type Got, type Response } from 'got';

/**
 * A keep-alive socket that the server closes just as it is reused fails with
 * ECONNRESET (seen with the site in another process on a loaded machine, where
 * several pooled sockets can be dead at once): try again at once on a fresh
 * connection, as crawlq's fetcher and Crawlee retry too.
 */
const freshConnection = new HttpAgent({ keepAlive: false });
async function getWithRetries(client: Got, url: string): Promise<Response<Buffer>> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await client.get(url, attempt === 1 ? { responseType: 'buffer' } : { responseType: 'buffer', agent: { http: freshConnection } });
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

export async function bareLoop(seeds: readonly string[], concurrency: number): Promise<{ pages: number; seconds: number }> {
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 256 });
  const client = got.extend({ agent: { http: agent }, retry: { limit: 0 }, throwHttpErrors: false, responseType: 'buffer' });
  const seen = new Set<string>(seeds);
  const queue = [...seeds];
  let pages = 0;
  let inFlight = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const url = queue.shift();
      if (url === undefined) {
        if (inFlight === 0) return;
        await sleep(1);
        continue;
      }
      inFlight += 1;
      const response = await getWithRetries(client, url);
      pages += 1;
      if (String(response.headers['content-type']).includes('text/html') && response.statusCode < 400) {
        const $ = cheerio.load(response.body.toString('utf8'));
        $('a[href]').each((_, element) => {
          const href = $(element).attr('href');
          if (!href) return;
          try {
            const link = new URL(href, url);
            link.hash = '';
            if (link.protocol !== 'http:' && link.protocol !== 'https:') return;
            const key = link.href;
            if (!seen.has(key)) {
              seen.add(key);
              queue.push(key);
            }
          } catch {
            // not a URL
          }
        });
      }
      inFlight -= 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return { pages, seconds: (performance.now() - started) / 1000 };
}
