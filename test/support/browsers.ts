import { readdirSync, readFileSync } from 'node:fs';

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly argv: readonly string[];
}

function processes(): Proc[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
        return [{ pid: Number(name), ppid, argv }];
      } catch {
        return [];
      }
    });
}

/**
 * The main Chromium processes (not the launcher script, not renderers or
 * helpers) among the descendants of `root`: the browsers a crawl's workers run.
 */
export function browserProcessesUnder(root: number): number[] {
  const all = processes();
  const descendants = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of all) {
      if (!descendants.has(entry.pid) && descendants.has(entry.ppid)) {
        descendants.add(entry.pid);
        grew = true;
      }
    }
  }
  return all
    .filter((entry) => entry.pid !== root && descendants.has(entry.pid))
    .filter((entry) => /chrom/i.test(entry.argv[0] ?? '') && !entry.argv.some((arg) => arg.startsWith('--type=')))
    .map((entry) => entry.pid);
}
