/**
 * Not a test: loopback throughput of the fetcher against plain got and node:http.
 * Run: node --conditions=@crawlq/source --import tsx test/fetch-throughput.bench.ts
 * The server runs in a child process so it does not share the client's event loop.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import got from 'got';
import { createFetcher } from '../src/index.js';

const SERVER = `
const http = require('node:http');
const zlib = require('node:zlib');
const page = Buffer.from('<html><body>' + 'crawlq '.repeat(1400) + '</body></html>'); // ~10 KB
const gz = zlib.gzipSync(page);
const server = http.createServer((req, res) => {
  if (req.url.startsWith('/gz')) { res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': gz.length }); res.end(gz); return; }
  res.writeHead(200, { 'content-type': 'text/html', 'content-length': page.length });
  res.end(page);
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

const TOTAL = 20_000;
const CONCURRENCY = 64;

async function run(name: string, path: string, once: (url: string) => Promise<unknown>, port: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < TOTAL) {
      const i = next++;
      await once(`http://127.0.0.1:${port}${path}?i=${i}`);
    }
  };
  // Warm-up: sockets, JIT.
  for (let i = 0; i < 500; i++) await once(`http://127.0.0.1:${port}${path}?warm=${i}`);
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  console.log(`${name.padEnd(40)} ${(TOTAL / seconds).toFixed(0).padStart(6)} req/s`);
}

const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));

try {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const raw = (url: string): Promise<number> =>
    new Promise((resolve, reject) => {
      http
        .get(url, { agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks).length));
        })
        .on('error', reject);
    });
  await run('node:http keep-alive (baseline)', '/', raw, port);

  const plainGot = got.extend({ agent: { http: agent }, responseType: 'buffer', retry: { limit: 0 } });
  await run('got.extend, buffer, no extras', '/', (url) => plainGot(url), port);

  const fetcher = createFetcher({ allowPrivateNetwork: true });
  await run('createFetcher (allowPrivateNetwork)', '/', (url) => fetcher.fetch(url), port);
  await run('createFetcher, gzip body', '/gz', (url) => fetcher.fetch(url), port);
  fetcher.close();

  // The guard's resolver path (a name, resolved per new connection) plus a policy check.
  const guarded = createFetcher({
    resolve: () => Promise.resolve(['127.0.0.1']),
    isAddressAllowed: (address) => address === '127.0.0.1',
  });
  await run('createFetcher, SSRF guard on (name)', '/', (url) => guarded.fetch(url.replace('127.0.0.1', 'bench.test')), port);
  guarded.close();
  agent.destroy();
} finally {
  child.kill();
}
