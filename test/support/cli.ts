import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { builtEntryFor, SOURCE_ENTRY, staleReason } from '../../apps/cli/build-freshness.mjs';

/** The repository root, where `pnpm crawlq` runs. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let buildCurrent: boolean | undefined;

/**
 * Node's arguments for `crawlq <args>`, chosen as `pnpm crawlq` chooses: the
 * build when it is current (CI builds first), else the sources through tsx, so
 * an edit is never tested stale. The build starts in a fifth of the CPU (0.4 s
 * against 2 s a process here), and the suite starts hundreds of crawlq
 * processes. Run directly, not through the launcher, which runs stale sources
 * in a child of its own: a test's signal or IPC channel must reach crawlq itself.
 */
export function cliArgs(args: readonly string[]): string[] {
  buildCurrent ??= staleReason() === undefined;
  if (buildCurrent) return [builtEntryFor(args), ...args];
  return ['--conditions=@crawlq/source', '--import', 'tsx', SOURCE_ENTRY, ...args];
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  readonly env?: Record<string, string | undefined>;
  readonly cwd?: string;
  readonly input?: string;
  readonly timeoutMs?: number;
  /** Node's own flags, before crawlq's entry (e.g. `--import` of a loader hook). */
  readonly nodeFlags?: readonly string[];
}

/** Environment for a crawlq child: the test's Redis, nothing inherited that could change behaviour. */
export function cliEnv(redisUrl: string | undefined, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(CRAWLQ_|SMTP_|ALERT_|REDIS_URL$|REDIS_SEEDS$)/.test(name)) env[name] = value;
  }
  return { ...env, ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }), ...extra };
}

/** Starts `crawlq <args>` as a process, as `pnpm crawlq` does (see {@link cliArgs}). */
export function startCli(args: readonly string[], options: CliOptions = {}): ChildProcess {
  return spawn(process.execPath, [...(options.nodeFlags ?? []), ...cliArgs(args)], {
    cwd: options.cwd ?? REPO_ROOT,
    // Hints crawlq prints name it as the launcher has it named: `pnpm crawlq`.
    env: { CRAWLQ_INVOKED_AS: 'pnpm crawlq', ...(options.env ?? process.env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs `crawlq <args>` to completion and collects its output. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const child = startCli(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`crawlq ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 120_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Resolves when the child exits. */
export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** A CLI process started with no input, its output collected as it comes. */
export interface CapturedCli {
  readonly child: ChildProcess;
  /** Everything written so far (read it after the process exits for all of it). */
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<number | null>;
}

/** Starts the CLI like {@link startCli}, closes its input and collects stdout and stderr. */
export function startCapturedCli(args: readonly string[], options: CliOptions = {}): CapturedCli {
  const child = startCli(args, options);
  child.stdin?.end();
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  return { child, output, exited: exited(child) };
}
