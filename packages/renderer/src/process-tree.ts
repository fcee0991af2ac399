import { readdirSync, readFileSync } from 'node:fs';

/** One process as /proc shows it. */
interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly rssBytes: number;
  readonly command: string;
}

const PAGE_BYTES = 4096;

function readEntry(pid: number): ProcEntry | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command may hold spaces and parentheses: fields start after the last ')'.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const command = stat.slice(stat.indexOf('(') + 1, close);
    return { pid, ppid: Number(fields[1]), rssBytes: Number(fields[21]) * PAGE_BYTES, command };
  } catch {
    return undefined;
  }
}

/** Every process (Linux /proc); empty where there is no /proc. */
function listProcesses(): ProcEntry[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  return names.filter((name) => /^\d+$/.test(name)).flatMap((name) => readEntry(Number(name)) ?? []);
}

/** Direct children of `pid`. */
export function childPids(pid: number): number[] {
  return listProcesses().filter((entry) => entry.ppid === pid).map((entry) => entry.pid);
}

/** `pid` and all its descendants, `pid` first, parents before their children (one reading of /proc). */
export function treePids(pid: number): number[] {
  return [pid, ...treeEntries(pid).filter((entry) => entry.pid !== pid).map((entry) => entry.pid)];
}

/** The entries of `pid` (when it is there) and all its descendants, parents before their children, from one reading of /proc. */
function treeEntries(pid: number): ProcEntry[] {
  const all = listProcesses();
  const children = new Map<number, ProcEntry[]>();
  for (const entry of all) {
    const siblings = children.get(entry.ppid);
    if (siblings === undefined) children.set(entry.ppid, [entry]);
    else siblings.push(entry);
  }
  const tree = all.filter((entry) => entry.pid === pid);
  for (let index = 0; index < tree.length; index += 1) tree.push(...(children.get(tree[index]?.pid ?? -1) ?? []));
  return tree;
}

/**
 * Memory of `pid` and all its descendants, in bytes (0 where /proc is
 * missing): each process' proportional set size (PSS), which splits a page
 * shared by several processes among them. Chromium's processes share most of
 * their code and a good part of their data, so summing their resident sizes
 * counts the same pages up to a dozen times: a browser with four tabs that
 * holds about 600 MB sums to about 1.8 GB resident. See {@link countedBytes}
 * for a process whose PSS cannot be read.
 */
export function treeMemoryBytes(pid: number): number {
  const kernelHasPss = kernelReportsPss();
  return treeEntries(pid).reduce((total, entry) => total + countedBytes(proportionalBytes(entry.pid), entry.rssBytes, kernelHasPss), 0);
}

/**
 * What one process of a tree counts: its PSS; where the kernel has no
 * smaps_rollup at all, its resident size. A process whose smaps_rollup
 * cannot be read on a kernel that has it is starting or exiting (a forked
 * child before its exec, a process giving its memory back): it counts
 * nothing. Its resident size, read a moment earlier, counts every page it
 * shares with the rest of the browser in full: hundreds of MB the tree does
 * not hold, enough to retire a browser past its memory cap for nothing.
 */
export function countedBytes(pss: number | undefined, rssBytes: number, kernelHasPss: boolean): number {
  if (pss !== undefined) return pss;
  return kernelHasPss ? 0 : rssBytes;
}

let pssReadable: boolean | undefined;
/** Whether this kernel has smaps_rollup (Linux 4.14 and later), read off this process once. */
function kernelReportsPss(): boolean {
  pssReadable ??= proportionalBytes(process.pid) !== undefined;
  return pssReadable;
}

/** A process' PSS from /proc/<pid>/smaps_rollup (Linux 4.14 and later), or undefined. */
export function proportionalBytes(pid: number): number | undefined {
  try {
    const match = /^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}
