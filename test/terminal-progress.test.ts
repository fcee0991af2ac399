import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs, cliEnv, REPO_ROOT } from './support/cli.js';
import { hasTmux, runOnTerminal, type TerminalRun } from './support/tmux.js';

const tmux = hasTmux();
if (!tmux) console.warn('terminal tests skipped: tmux is missing (infra/setup.sh installs it: apt-get install -y tmux)');

/** The progress line's own text (plain, as the screen shows it). */
const PROGRESS = /pages \d+ \(\d+\.\d\/s\) \| backlog \d+/;
/** A log line's text: a pretty line's time and level, or a JSON line. */
const LOG = /\d\d:\d\d:\d\d\.\d{3} (?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\b|\{"level":/;
/** An SGR escape: a colour or another text attribute. */
const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`);

let redis: TestRedis;
let site: DemoSite;

beforeAll(async () => {
  redis = await startTestRedis();
  // One host at 10 pages/s: the crawl lasts seconds however fast the machine,
  // with a page that always fails (dead-lettered, a warning) and the workers'
  // stats lines every 300 ms, so log lines keep coming while the progress is drawn.
  site = await startDemoSite({ hosts: ['127.0.0.2'], pagesPerHost: 60, linksPerPage: 4, faults: [{ path: '/p/3', status: 503 }] });
});
afterAll(async () => {
  await site?.close();
  await redis?.stop();
});

function crawlOnTerminal(namespace: string, env: Record<string, string> = {}): Promise<TerminalRun> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-terminal-'));
  const args = ['crawl', site.seeds[0] ?? '', '--namespace', namespace, '--allow-private-network', '--rate', '10/1s', '--max-pages', '30', '--attempts', '1'];
  args.push('--stats-interval', '300ms', '--out', join(dir, 'results.jsonl'), '--state-dir', dir);
  // 100 columns: the progress line is longer, and wraps; all of it must be erased before a log line.
  return runOnTerminal([process.execPath, ...cliArgs(args)], { env: cliEnv(redis.url, { CRAWLQ_INVOKED_AS: 'pnpm crawlq', NO_COLOR: undefined, ...env }), cwd: REPO_ROOT, width: 100 });
}

/** The lines (of any capture) on which a log line was written onto the progress line. */
function glued(run: TerminalRun): string[] {
  return [...run.samples.flat(), ...run.screen].filter((line) => PROGRESS.test(line) && LOG.test(line));
}

describe.skipIf(!tmux)('crawlq crawl on a terminal', () => {
  it('writes log lines above the progress line, never onto it, and draws a bar with an ETA for --max-pages', { timeout: 180_000 }, async () => {
    const run = await crawlOnTerminal('terminal-colour');
    expect(run.code, run.screen.join('\n')).toBe(0);
    expect(glued(run)).toEqual([]);

    // Log lines were written while the progress was on the screen: the first
    // progress was drawn before the last worker's stats line came.
    const firstProgress = run.raw.indexOf('| backlog');
    expect(firstProgress).toBeGreaterThanOrEqual(0);
    expect(run.raw.lastIndexOf('stats: ')).toBeGreaterThan(firstProgress);
    // The workers' lines arrive as JSON through a pipe and are shown as this terminal's own.
    const logLines = run.screen.filter((line) => LOG.test(line));
    expect(logLines.some((line) => / INFO +worker-\d+ stats: /.test(line))).toBe(true);
    expect(logLines.some((line) => line.includes('{"level":'))).toBe(false);
    // The dead-lettered page was logged, on a line of its own.
    expect(run.screen.some((line) => line.includes('/p/3') && LOG.test(line) && !PROGRESS.test(line))).toBe(true);

    // Redrawn, not appended: each capture holds at most one progress line,
    // and the last one stays above the summary.
    for (const sample of run.samples) expect(sample.filter((line) => PROGRESS.test(line)).length).toBeLessThanOrEqual(1);
    const last = run.screen.findIndex((line) => PROGRESS.test(line));
    expect(run.screen[last]).toMatch(/^█*░* \d+% \d+\/30 (?:ETA \S+|done) \[/);
    expect(run.screen.findIndex((line) => line.includes('crawl finished'))).toBeGreaterThan(last);
    // On a terminal with NO_COLOR unset, it is coloured.
    expect(run.raw).toMatch(SGR);
  });

  it('writes no colour with NO_COLOR, and still keeps log lines off the progress line', { timeout: 180_000 }, async () => {
    const run = await crawlOnTerminal('terminal-no-colour', { NO_COLOR: '1' });
    expect(run.code, run.screen.join('\n')).toBe(0);
    expect(glued(run)).toEqual([]);
    expect(run.screen.some((line) => PROGRESS.test(line))).toBe(true);
    expect(run.screen.some((line) => LOG.test(line))).toBe(true);
    expect(run.raw).not.toMatch(SGR);
  });

  it('keeps the workers\' log lines off the progress line in `crawlq demo` too', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-terminal-demo-'));
    const args = ['demo', '--max-pages', '40', '--stats-interval', '300ms', '--out', join(dir, 'demo.jsonl'), '--state-dir', dir];
    const run = await runOnTerminal([process.execPath, ...cliArgs(args)], { env: cliEnv(redis.url, { CRAWLQ_INVOKED_AS: 'pnpm crawlq' }), cwd: REPO_ROOT, width: 100 });
    expect(run.code, run.screen.join('\n')).toBe(0);
    expect(glued(run)).toEqual([]);
    expect(run.raw.lastIndexOf('stats: ')).toBeGreaterThan(run.raw.indexOf('| backlog'));
    for (const sample of run.samples) expect(sample.filter((line) => PROGRESS.test(line)).length).toBeLessThanOrEqual(1);
  });
});
