import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** Options for `startTestNginx`. */
export interface TestNginxOptions {
  /** Loopback addresses to listen on, one site (and one rate bucket) each. */
  readonly hosts: readonly string[];
  /** Pages per host besides `/`; page n links to n + 1, 2n and 2n + 1. */
  readonly pagesPerHost: number;
  /** `limit_req` rate per host in requests per second, no burst: a request sooner than 1/rate s after the last accepted one gets 429. */
  readonly ratePerSecond: number;
}

/** One line of the access log. */
export interface NginxLogEntry {
  /** The address that served it (`$server_addr`). */
  readonly host: string;
  /** nginx's (cached, millisecond) clock when the request was logged, epoch ms. */
  readonly atMs: number;
  readonly status: number;
  readonly path: string;
}

/** A private nginx started for one test or benchmark, on loopback addresses and a free port. */
export interface TestNginx extends AsyncDisposable {
  readonly port: number;
  /** `http://host:port/` per host. */
  readonly seeds: readonly string[];
  /** Every request logged so far, in log order. */
  accessLog(): Promise<NginxLogEntry[]>;
  /** Stops nginx and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts the system's nginx (Debian's nginx-light has `limit_req`) with its own
 * configuration, pid, logs and temp files in a temporary directory, serving a
 * generated static site per host. The rate bucket is keyed on `$server_addr`:
 * every client is 127.0.0.1, so keying on the client address would give all
 * hosts one bucket.
 */
export async function startTestNginx(options: TestNginxOptions): Promise<TestNginx> {
  const dir = await mkdtemp(join(tmpdir(), 'crawlq-test-nginx-'));
  try {
    await writeSites(dir, options);
    for (let attempt = 0; ; attempt += 1) {
      const port = await freePort(options.hosts[0]);
      try {
        return await launch(dir, port, options);
      } catch (error) {
        if (attempt >= 4) throw error;
      }
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function writeSites(dir: string, options: TestNginxOptions): Promise<void> {
  for (const host of options.hosts) {
    const root = join(dir, 'site', host);
    await mkdir(join(root, 'p'), { recursive: true });
    await writeFile(join(root, 'robots.txt'), 'User-agent: *\nAllow: /\n');
    await writeFile(join(root, 'index.html'), page(host, 'home', [1]));
    for (let n = 1; n <= options.pagesPerHost; n += 1) {
      const links = [n + 1, 2 * n, 2 * n + 1].filter((target) => target <= options.pagesPerHost);
      await writeFile(join(root, 'p', `${n}.html`), page(host, `page ${n}`, links));
    }
  }
}

function page(host: string, title: string, links: readonly number[]): string {
  const anchors = links.map((n) => `<a href="/p/${n}.html">page ${n}</a>`).join('\n');
  return `<!doctype html><html><head><title>${host} ${title}</title></head><body><h1>${title}</h1>\n${anchors}\n</body></html>\n`;
}

function config(dir: string, port: number, options: TestNginxOptions): string {
  const runningAsRoot = process.getuid?.() === 0;
  return `${runningAsRoot ? 'user root;\n' : ''}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  types { text/html html; text/plain txt; }
  default_type application/octet-stream;
  log_format crawlq '$server_addr $msec $status $request_uri';
  access_log ${dir}/access.log crawlq;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  limit_req_zone $server_addr zone=perhost:1m rate=${options.ratePerSecond}r/s;
  limit_req_status 429;
  server {
${options.hosts.map((host) => `    listen ${host}:${port};`).join('\n')}
    root ${dir}/site/$server_addr;
    index index.html;
    limit_req zone=perhost;
  }
}
`;
}

async function launch(dir: string, port: number, options: TestNginxOptions): Promise<TestNginx> {
  const confPath = join(dir, 'nginx.conf');
  await mkdir(join(dir, 'tmp'), { recursive: true });
  await writeFile(confPath, config(dir, port, options));
  await rm(join(dir, 'access.log'), { force: true });
  const child = spawn('nginx', ['-p', dir, '-c', confPath, '-e', join(dir, 'error.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitForListening(child, { hosts: options.hosts, port, describe: () => output + errorLog(dir) });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // QUIT: graceful; nginx removes its pid file and lets its worker finish.
        child.kill('SIGQUIT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    })());
  return {
    port,
    seeds: options.hosts.map((host) => `http://${host}:${port}/`),
    accessLog: async () => parseLog(await readFile(join(dir, 'access.log'), 'utf8').catch(() => '')),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

function errorLog(dir: string): string {
  return ` (see ${join(dir, 'error.log')})`;
}

function parseLog(text: string): NginxLogEntry[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [host = '', msec = '0', status = '0', path = ''] = line.split(' ');
      return { host, atMs: Math.round(Number(msec) * 1000), status: Number(status), path };
    });
}

async function waitForListening(
  child: ChildProcess,
  target: { readonly hosts: readonly string[]; readonly port: number; readonly describe: () => string },
): Promise<void> {
  const { hosts, port, describe } = target;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}): ${describe()}`);
    const up = await Promise.all(hosts.map((host) => canConnect(host, port)));
    if (up.every(Boolean)) return;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen on port ${port} within 10 s: ${describe()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
