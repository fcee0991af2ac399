import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { cliEnv, exited, runCli, startCli } from './cli.js';
import { StatusReader } from './crawl-status.js';

/** A set of `crawlq worker` processes sharing one Redis, for end-to-end tests. */
export class Fleet {
  readonly workers: ChildProcess[] = [];
  readonly logs: string[] = [];
  readonly #env: Record<string, string | undefined>;
  readonly #flags: readonly string[];
  readonly #dir: string;
  readonly #statusReader: StatusReader;

  constructor(options: { redisUrl: string; flags: readonly string[]; dir: string }) {
    this.#env = cliEnv(options.redisUrl);
    this.#flags = options.flags;
    this.#dir = options.dir;
    const namespace = options.flags[options.flags.indexOf('--namespace') + 1];
    this.#statusReader = new StatusReader(options.redisUrl, options.flags.includes('--namespace') && namespace !== undefined ? namespace : 'crawlq');
  }

  get env(): Record<string, string | undefined> {
    return this.#env;
  }

  /** Starts a worker writing to its own results file; resolves once it takes jobs. */
  async start(extra: readonly string[] = []): Promise<ChildProcess> {
    const index = this.workers.length;
    const child = startCli(['worker', ...this.#flags, '--out', join(this.#dir, `worker-${index}.jsonl`), ...extra], { env: this.#env });
    this.workers.push(child);
    this.logs.push('');
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.logs[index] += chunk.toString();
      if (this.logs[index]?.includes('started (')) started();
    });
    child.stdout?.on('data', (chunk: Buffer) => (this.logs[index] += chunk.toString()));
    await Promise.race([ready, exited(child).then((code) => Promise.reject(new Error(`worker exited early (${code}): ${this.logs[index]}`)))]);
    return child;
  }

  resultFiles(): string[] {
    return this.workers.map((_, index) => join(this.#dir, `worker-${index}.jsonl`));
  }

  cli(args: readonly string[], input?: string) {
    return runCli([...args, ...this.#flags.filter((flag, i, all) => flag === '--namespace' || all[i - 1] === '--namespace')], {
      env: this.#env,
      ...(input === undefined ? {} : { input }),
    });
  }

  /** `crawlq status --json`, run as a command. */
  async status(): Promise<{ done: boolean; completed: number; backlog: number; waiting: number; delayed: number; active: number; deadLettered: number; seen: number }> {
    const result = await this.cli(['status', '--json']);
    return JSON.parse(result.stdout) as Awaited<ReturnType<Fleet['status']>>;
  }

  /**
   * Done twice in a row with the same seen count, as `crawl` decides it:
   * shards are read one after another. Read in this process with the function
   * `crawlq status` calls, not by starting the command every poll (see StatusReader).
   */
  async waitUntilDone(timeoutMs = 120_000): Promise<void> {
    await this.#statusReader.waitUntilDone({ timeoutMs });
  }

  /** SIGTERM to every live worker; resolves with their exit codes. */
  async stop(): Promise<(number | null)[]> {
    for (const child of this.workers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const [codes] = await Promise.all([Promise.all(this.workers.map((child) => exited(child))), this.#statusReader.close()]);
    return codes;
  }
}
