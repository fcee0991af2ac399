import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median } from './support.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = `${ROOT}apps/cli/dist/main.js`;
const COMMANDS = `${ROOT}apps/cli/dist/commands`;
const SOURCE_CLI = `${ROOT}apps/cli/src/main.ts`;
/** What `pnpm crawlq` runs: checks the build is current, then runs it (else the sources through tsx). */
const LAUNCHER = `${ROOT}apps/cli/launcher.mjs`;
/** `crawlq worker` in one file: what `crawl` spawns from the build. */
const WORKER_BUNDLE = `${ROOT}apps/cli/dist/crawlq-worker.js`;

/** One start-up case: a command line and what it stands for. */
interface Case {
  readonly name: string;
  readonly args: readonly string[];
}

/**
 * Start-up time of the built CLI: bare node, `--help` and small
 * commands, against loading every command module eagerly, which is what the
 * CLI did before commands were loaded on demand; and what `pnpm crawlq` runs
 * (the launcher, which runs the build when it is current) against the sources
 * through tsx, which `pnpm crawlq` ran before. Runs the cases interleaved,
 * `rounds` times, and reports the median wall time and CPU time (user + system,
 * less disturbed by a busy machine) of each, and each one's excess over bare
 * node. Needs a current `pnpm build` (run.ts checks).
 */
export function benchCliStartup(log: (line: string) => void, rounds = 10): Promise<void> {
  const eagerImports = ['crawl', 'enqueue', 'worker', 'status', 'demo', 'group', 'dlq', 'dashboard', 'options']
    .map((name) => `import '${COMMANDS}/${name}.js';`)
    .join(' ');
  const cases: Case[] = [
    { name: 'node -e 0 (bare node)', args: ['-e', '0'] },
    { name: 'crawlq --help', args: [CLI, '--help'] },
    { name: 'pnpm crawlq --help (launcher: build check)', args: [LAUNCHER, '--help'] },
    { name: 'crawlq --help from source (tsx)', args: ['--conditions=@crawlq/source', '--import', 'tsx', SOURCE_CLI, '--help'] },
    { name: 'crawlq options', args: [CLI, 'options'] },
    { name: 'crawlq worker --help', args: [CLI, 'worker', '--help'] },
    ...(existsSync(WORKER_BUNDLE) ? [{ name: 'bundled worker --help (what crawl spawns)', args: [WORKER_BUNDLE, 'worker', '--help'] }] : []),
    // What each worker `crawl` spawns loaded before `pnpm crawlq` ran the build.
    { name: 'crawlq worker --help from source (tsx)', args: ['--conditions=@crawlq/source', '--import', 'tsx', SOURCE_CLI, 'worker', '--help'] },
    { name: 'every command module loaded (the eager CLI)', args: ['--input-type=module', '-e', eagerImports] },
  ];
  const wall = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  const cpu = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let round = 0; round < rounds + 1; round += 1) {
    for (const c of cases) {
      const started = performance.now();
      // bash's `time` reports the child's CPU time, which Node's spawnSync does not.
      const result = spawnSync('bash', ['-c', `TIMEFORMAT='%U %S'; time ${[process.execPath, ...c.args].map(quote).join(' ')} >/dev/null`], { encoding: 'utf8' });
      const elapsed = performance.now() - started;
      if (result.status !== 0) throw new Error(`${c.name} failed: ${result.stderr}`);
      const [user, system] = (result.stderr.trim().split('\n').at(-1) ?? '0 0').split(' ').map(Number);
      if (round === 0) continue; // warm-up: file cache
      wall.get(c.name)?.push(elapsed);
      cpu.get(c.name)?.push(((user ?? 0) + (system ?? 0)) * 1000);
    }
  }
  const bareWall = median(wall.get(cases[0]?.name ?? '') ?? []);
  const bareCpu = median(cpu.get(cases[0]?.name ?? '') ?? []);
  log(`cli-startup: median of ${rounds} runs each, interleaved; excess = minus bare node`);
  for (const c of cases) {
    const w = median(wall.get(c.name) ?? []);
    const t = median(cpu.get(c.name) ?? []);
    log(`  ${c.name.padEnd(46)} wall ${w.toFixed(0).padStart(5)} ms (excess ${(w - bareWall).toFixed(0).padStart(5)})  cpu ${t.toFixed(0).padStart(5)} ms (excess ${(t - bareCpu).toFixed(0).padStart(5)})`);
  }
  return Promise.resolve();
}

function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
