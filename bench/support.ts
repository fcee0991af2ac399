import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { crawlCounts } from '@crawlq/queue';
import { fileURLToPath } from 'node:url';

const CLI_ENTRY = fileURLToPath(new URL('../apps/cli/src/main.ts', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Starts `crawlq <args>` the way `pnpm crawlq` does. */
export function startCrawlq(args: readonly string[], env: Record<string, string>): ChildProcess {
  return startScript(CLI_ENTRY, args, env);
}

/** Runs a TypeScript entry point of this repository in a child process, with only `env`'s crawlq settings. */
export function startScript(entry: string, args: readonly string[], env: Record<string, string>, options: { ipc?: boolean } = {}): ChildProcess {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(CRAWLQ_|REDIS_URL$)/.test(name)) childEnv[name] = value;
  const profile = process.env.CRAWLQ_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CRAWLQ_BENCH_PROFILE}`] : [];
  return spawn(process.execPath, ['--conditions=@crawlq/source', '--import', 'tsx', ...profile, entry, ...args], {
    cwd: REPO_ROOT,
    env: { ...childEnv, ...env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
}

/** Peak resident set of a live process (VmHWM), in bytes. */
export function peakRss(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${seen}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        child.stderr?.off('data', onData);
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.stdout?.on('data', onData);
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export function fmt(value: number, digits = 1): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** Resolves once the crawl queue has nothing waiting, delayed or active: the crawl is over. */
export async function untilQueueDrained(queue: Parameters<typeof crawlCounts>[0]): Promise<void> {
  for (;;) {
    const counts = await crawlCounts(queue);
    if (counts.waiting + counts.delayed + counts.active === 0) return;
    await sleep(10);
  }
}
