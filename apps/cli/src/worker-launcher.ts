import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OPTION_TABLE, type CrawlqConfig } from '@crawlq/config';
import { lineSplitter } from './output.js';

/**
 * Launches `crawlq worker` child processes that run with exactly the parent's
 * resolved configuration: it is handed over as a private config file, and the
 * variables that would override it are left out of the child's environment.
 */
export function createWorkerLauncher(
  config: CrawlqConfig,
  redisUrl: string,
  output: { stderrLine?: (line: string) => void } = {},
): { spawn(index: number): ChildProcess; dispose(): void } {
  const dir = resolve(config.stateDir, 'run');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `worker-config-${process.pid}.json`);
  // Only what was set explicitly: defaults stay defaults in the child, so the
  // child publishes the same limits the parent did, and no others.
  const handedOver = Object.fromEntries(config.explicit.filter((name) => name !== 'redisUrl').map((name) => [name, config[name]]));
  writeFileSync(file, JSON.stringify(handedOver), { mode: 0o600 });
  chmodSync(file, 0o600); // It may hold SMTP credentials.

  const overriding = new Set<string>(Object.values(OPTION_TABLE).flatMap((entry) => (entry.env === undefined ? [] : [entry.env])));
  overriding.add('CRAWLQ_CONFIG');
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!overriding.has(name)) env[name] = value;
  env.REDIS_URL = redisUrl;

  const entry = process.argv[1] ?? '';
  return {
    spawn(index) {
      const { stderrLine } = output;
      // The IPC channel lets `crawl` tell a worker the crawl finished (no signal to log);
      // stderr goes through the parent so a log line never lands inside the progress line.
      const child = spawn(process.execPath, [...process.execArgv, entry, 'worker', '--config', file], {
        env: { ...env, CRAWLQ_WORKER_INDEX: String(index) },
        stdio: ['ignore', 'inherit', stderrLine ? 'pipe' : 'inherit', 'ipc'],
      });
      if (stderrLine && child.stderr) {
        const lines = lineSplitter(stderrLine);
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => lines.push(chunk)).on('end', () => lines.end());
      }
      return child;
    },
    dispose() {
      rmSync(file, { force: true });
    },
  };
}
