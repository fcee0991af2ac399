import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPTION_TABLE, type CrawlqConfig } from '@crawlq/config';
import { encodeWorkerLaunch, WORKER_START_MESSAGE } from '@crawlq/crawler/protocol';
import { lineSplitter } from './output.js';
import { pathError } from './path-errors.js';

/** The fd a worker's relayed stderr is handed over as (see WORKER_ENV.directStderrFd): the one after the IPC channel's. */
const DIRECT_STDERR_FD = 4;

/**
 * The bundled worker beside the built CLI (dist/crawlq-worker.js, made by
 * `pnpm build`): one file, which starts in about half the time.
 * This module is in a chunk of the bundled CLI (dist/crawlq-chunks/), or in
 * tsc's dist/. From the sources (tsx) there is none, and workers run this
 * CLI's own entry.
 */
const WORKER_BUNDLE = ['../crawlq-worker.js', './crawlq-worker.js'].map((path) => fileURLToPath(new URL(path, import.meta.url))).find((path) => existsSync(path));

/**
 * Launches `crawlq worker` child processes that run with the parent's resolved
 * per-process configuration: it is handed over as a private config file, and the
 * variables that would override it are left out of the child's environment.
 */
export function createWorkerLauncher(
  config: CrawlqConfig,
  redisUrl: string,
  output: { stderrLine?: (line: string) => void } = {},
): { prespawn(count: number): void; spawn(index: number): ChildProcess; dispose(): void } {
  const dir = resolve(config.stateDir, 'run');
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    // Before anything is published: a state directory that cannot be made is an input error naming its option.
    throw pathError('--state-dir', `cannot create directory ${dir}`, error);
  }
  const file = join(dir, `worker-config-${process.pid}.json`);
  // Only this process's own settings, and only those set explicitly: the
  // crawl-shaping ones come from the fleet's definition, which the parent
  // published before spawning, so a `config set` mid-crawl holds for restarted
  // workers too.
  const handedOver = Object.fromEntries(
    config.explicit.filter((name) => name !== 'redisUrl' && OPTION_TABLE[name].scope === 'process').map((name) => [name, config[name]]),
  );
  writeFileSync(file, JSON.stringify(handedOver), { mode: 0o600 });
  chmodSync(file, 0o600); // It may hold SMTP credentials.

  const overriding = new Set<string>(Object.values(OPTION_TABLE).flatMap((entry) => (entry.env === undefined ? [] : [entry.env])));
  overriding.add('CRAWLQ_CONFIG');
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!overriding.has(name)) env[name] = value;
  env.REDIS_URL = redisUrl;

  const entry = WORKER_BUNDLE ?? process.argv[1] ?? '';
  const nodeFlags = [...process.execArgv, ...(rendersPages(config) && !setsSemiSpace(process.execArgv) ? [RENDER_WORKER_SEMI_SPACE] : [])];
  // Started ahead, by index, until `spawn` hands them their go.
  const waiting = new Map<number, ChildProcess>();
  const start = (index: number, awaitStart: boolean): ChildProcess => {
    const { stderrLine } = output;
    // The IPC channel is how `crawl` stops a worker (the crawl finished: no
    // signal to log) and how a worker learns that this process is gone, even
    // by SIGKILL: it closes with us, and the worker stops. stderr goes
    // through the parent so a log line never lands inside the progress line.
    const child = spawn(process.execPath, [...nodeFlags, entry, 'worker', '--config', file], {
      env: { ...env, ...encodeWorkerLaunch({ index, handoverFile: file, awaitStart, ...(stderrLine ? { directStderrFd: DIRECT_STDERR_FD } : {}) }) },
      stdio: stderrLine ? ['ignore', 'inherit', 'pipe', 'ipc', 2] : ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    if (stderrLine && child.stderr) {
      const lines = lineSplitter(stderrLine);
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => lines.push(chunk)).on('end', () => lines.end());
    }
    return child;
  };
  return {
    // A worker's start is mostly loading its code (about 0.4 s, `pnpm bench
    // scale`): done while `crawl` loads its own and prepares the namespace.
    prespawn(count) {
      for (let index = 0; index < count; index += 1) waiting.set(index, start(index, true));
    },
    spawn(index) {
      const ready = waiting.get(index);
      waiting.delete(index);
      if (ready?.exitCode === null && ready.signalCode === null && ready.connected && ready.send(WORKER_START_MESSAGE)) return ready;
      ready?.kill('SIGKILL');
      return start(index, false);
    },
    dispose() {
      // Never told to start: they hold nothing, nothing to wait for.
      for (const child of waiting.values()) child.kill('SIGKILL');
      waiting.clear();
      rmSync(file, { force: true });
    },
  };
}

/**
 * A worker that drives a browser waits on it most of the time, and V8 lets
 * its young generation grow to 16 MB a semi-space all the same: capped at
 * 2 MB, a render worker holds about 30 MB less at its peak, for more frequent
 * scavenges it has the time for. Workers that only fetch keep V8's default,
 * which their throughput wants.
 */
const RENDER_WORKER_SEMI_SPACE = '--max-semi-space-size=2';

function rendersPages(config: CrawlqConfig): boolean {
  return config.render !== 'never' || config.limitRules.some((rule) => rule.render !== undefined && rule.render !== 'never');
}

/** A size the user chose for the parent (in NODE_OPTIONS or on the command line) is theirs. */
function setsSemiSpace(execArgv: readonly string[]): boolean {
  return [...execArgv, process.env.NODE_OPTIONS ?? ''].some((flag) => flag.includes('semi-space-size'));
}
