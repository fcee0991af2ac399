import { readdirSync, readFileSync } from 'node:fs';

/** Every live process as {pid, ppid, cmdline}, read from /proc (Linux). */
export function processTable(): { pid: number; ppid: number; cmdline: string }[] {
  const rows: { pid: number; ppid: number; cmdline: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the `(comm)` that may hold spaces: state, ppid, ...
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (after[0] === 'Z') continue; // A zombie is gone, only not yet reaped.
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      rows.push({ pid: Number(name), ppid: Number(after[1]), cmdline });
    } catch {
      // Exited while we read: not running.
    }
  }
  return rows;
}

/** The pids of `pid`'s children, grandchildren and so on (in `table`, read now unless given). */
export function descendantsOf(pid: number, table = processTable()): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const row of table) {
      if (row.ppid === parent) {
        found.push(row.pid);
        queue.push(row.pid);
      }
    }
  }
  return found;
}

/** Resident set size of a process in bytes, undefined once it has exited. */
export function rssBytes(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The main Chromium processes (not the launcher script, not renderers or
 * helpers) among the descendants of `root`: the browsers a crawl's workers run.
 */
export function browserProcessesUnder(root: number): number[] {
  const table = processTable();
  const below = new Set(descendantsOf(root, table));
  return table
    .filter((row) => below.has(row.pid))
    .filter((row) => /chrom/i.test(row.cmdline.split(' ')[0] ?? '') && !/ --type=/.test(row.cmdline))
    .map((row) => row.pid);
}

/** The command lines of the `crawlq worker` processes a `crawl` (pid `root`) started, split at spaces. */
export function workerCommandLines(root: number): string[][] {
  return processTable()
    .filter((row) => row.ppid === root && / worker( |$)/.test(row.cmdline))
    .map((row) => row.cmdline.split(' '));
}
