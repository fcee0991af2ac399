import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { readCrawlProgress } from '@crawlq/frontier';
import type { CrawlQueue } from '@crawlq/queue';
import type { RedisClient } from '@crawlq/redis';
import { fileURLToPath } from 'node:url';
import { BUILT_ENTRY, staleReason, WORKER_BUNDLE } from '../apps/cli/build-freshness.mjs';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** What the benchmarks measure: the built CLI, as `pnpm crawlq` runs it once `pnpm build` is current. */
export const CRAWLQ_UNDER_TEST = `built JavaScript (${BUILT_ENTRY.slice(REPO_ROOT.length)}, and ${WORKER_BUNDLE.slice(REPO_ROOT.length)} where named); bench harness through tsx`;

/**
 * Refuses to measure a stale build: the figures must be for what users run
 * (the launcher would run the sources through tsx then).
 */
export function checkBuildCurrent(): void {
  const reason = staleReason();
  if (reason !== undefined) throw new Error(`the built CLI is not current (${reason}): run \`pnpm build\` first`);
}

/** Runs `node <built crawlq entry> <args>` with only `env`'s crawlq settings. */
export function startCrawlq(args: readonly string[], env: Record<string, string>): ChildProcess {
  return startNode([BUILT_ENTRY, ...args], env);
}

/**
 * Runs a TypeScript entry point of this repository in a child process (tsx
 * compiles that file), with only `env`'s crawlq settings. The workspace
 * packages it imports resolve to their builds, as the CLI's do.
 */
export function startScript(entry: string, args: readonly string[], env: Record<string, string>, options: { ipc?: boolean } = {}): ChildProcess {
  return startNode(['--import', 'tsx', entry, ...args], env, options);
}

/** Runs `node <args>` with only `env`'s crawlq settings. */
export function startNode(args: readonly string[], env: Record<string, string>, options: { ipc?: boolean } = {}): ChildProcess {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(CRAWLQ_|REDIS_URL$)/.test(name)) childEnv[name] = value;
  const profile = process.env.CRAWLQ_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CRAWLQ_BENCH_PROFILE}`] : [];
  return spawn(process.execPath, [...profile, ...args], {
    cwd: REPO_ROOT,
    env: { ...childEnv, ...env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
}

/** Peak resident set of a live process (VmHWM), in bytes. */
export function peakRss(pid: number): number | undefined {
  return statusKilobytes(pid, 'VmHWM');
}

/** Resident set of a live process now (VmRSS), in bytes. */
export function currentRss(pid: number): number | undefined {
  return statusKilobytes(pid, 'VmRSS');
}

/** A `NAME: N kB` field of /proc/PID/status, in bytes (undefined once the process is gone). */
function statusKilobytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** User plus system CPU time a live process has used, in seconds (/proc/PID/stat, clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number | undefined {
  try {
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined;
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

/** The middle value (of an even count, the upper of the two middle ones). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export function fmt(value: number, digits = 1): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** What is left of a crawl: URLs in the backlogs plus jobs waiting, delayed or active. */
export async function crawlLeft(services: { readonly queue: CrawlQueue; readonly redis: RedisClient }, namespace: string): Promise<number> {
  const counts = await readCrawlProgress(services.redis, namespace);
  return counts.backlog + counts.waiting + counts.delayed + counts.active;
}

/** Resolves once nothing is left of the crawl (see {@link crawlLeft}). */
export async function untilCrawlDone(services: Parameters<typeof crawlLeft>[0], namespace: string, pollMs = 10): Promise<void> {
  while ((await crawlLeft(services, namespace)) > 0) await sleep(pollMs);
}

/** What `round-trip-counter.ts` prints on SIGTERM. */
export interface CountedRoundTrips {
  readonly roundTrips: number;
  /** The most sent commands (a script by its SHA1's first 8 digits). */
  readonly breakdown: Record<string, number>;
  /** Per script, most inner commands first: its runs and the commands it ran inside Redis. */
  readonly scripts: readonly { readonly name: string; readonly runs: number; readonly inner: Record<string, number> }[];
}

/** One line per script: runs and inner commands per page, then its most run inner commands. */
export function scriptLines(scripts: CountedRoundTrips['scripts'], pages: number, top = Number(process.env.BENCH_SCRIPT_TOP ?? 6)): string[] {
  return scripts.map(({ name, runs, inner }) => {
    const total = Object.values(inner).reduce((sum, count) => sum + count, 0);
    const most = Object.entries(inner)
      .slice(0, top)
      .map(([command, count]) => `${command} ${fmt(count / pages, 2)}`)
      .join(', ');
    return `  ${name}: ${fmt(runs / pages, 2)} runs, ${fmt(total / pages, 1)} inner commands per page (${most})`;
  });
}
