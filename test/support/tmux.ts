import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether tmux can be run here (infra/setup.sh installs it). */
export function hasTmux(): boolean {
  return spawnSync('tmux', ['-V']).status === 0;
}

/** What a command did on a real terminal. */
export interface TerminalRun {
  readonly code: number;
  /** The screen and its scrollback as a person would see them at the end, one string a line (wrapped lines joined). */
  readonly screen: readonly string[];
  /** Screens (with scrollback) captured while the command ran, the last one included. */
  readonly samples: readonly (readonly string[])[];
  /** Every byte the command wrote to the terminal, escape codes included. */
  readonly raw: string;
}

const quote = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `argv` in a detached tmux pane of `width` x `height` (a real
 * pseudo-terminal, stdout and stderr both on it), on a tmux server of its own
 * (never the user's), recording the raw output with pipe-pane and capturing
 * the screen every `sampleMs` until the command exits.
 */
export async function runOnTerminal(
  argv: readonly string[],
  options: { env: Record<string, string | undefined>; cwd: string; width?: number; height?: number; timeoutMs?: number; sampleMs?: number },
): Promise<TerminalRun> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-tmux-'));
  const socket = `crawlq-test-${randomUUID().slice(0, 8)}`;
  const go = join(dir, 'go');
  const codeFile = join(dir, 'code');
  const rawFile = join(dir, 'raw.log');
  // The command waits for `go`, so pipe-pane records from its first byte; the
  // pane stays after it (sleep) so that its screen can still be captured.
  writeFileSync(
    join(dir, 'run.sh'),
    [
      `while [ ! -e ${quote(go)} ]; do sleep 0.05; done`,
      `cd ${quote(options.cwd)}`,
      `${argv.map(quote).join(' ')}`,
      `echo $? > ${quote(codeFile)}.tmp && mv ${quote(codeFile)}.tmp ${quote(codeFile)}`,
      'exec sleep 600',
    ].join('\n'),
  );
  const env = Object.fromEntries(Object.entries(options.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const tmux = (...args: string[]): string => {
    const result = spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const capture = (): string[] => tmux('capture-pane', '-p', '-J', '-t', 'run', '-S', '-', '-E', '-').replace(/\n+$/, '').split('\n');
  try {
    tmux('new-session', '-d', '-s', 'run', '-x', String(options.width ?? 160), '-y', String(options.height ?? 40), `sh ${quote(join(dir, 'run.sh'))}`);
    tmux('set-option', '-t', 'run', 'history-limit', '10000');
    tmux('pipe-pane', '-O', '-t', 'run', `cat >> ${quote(rawFile)}`);
    writeFileSync(go, '');
    const samples: string[][] = [];
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    while (!existsSync(codeFile)) {
      if (Date.now() > deadline) throw new Error(`${argv.join(' ')} did not finish on the terminal; its screen:\n${capture().join('\n')}`);
      samples.push(capture());
      await sleep(options.sampleMs ?? 150);
    }
    const screen = capture();
    samples.push(screen);
    // pipe-pane's cat may lag the pane by a moment: stop it, then read.
    tmux('pipe-pane', '-t', 'run');
    await sleep(100);
    return { code: Number(readFileSync(codeFile, 'utf8').trim()), screen, samples, raw: existsSync(rawFile) ? readFileSync(rawFile, 'utf8') : '' };
  } finally {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    rmSync(dir, { recursive: true, force: true });
  }
}
