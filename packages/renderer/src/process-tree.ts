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

/** Resident memory of `pid` and all its descendants, in bytes (0 where /proc is missing). */
export function treeRssBytes(pid: number): number {
  const all = listProcesses();
  const children = new Map<number, ProcEntry[]>();
  for (const entry of all) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  let total = 0;
  const stack = all.filter((entry) => entry.pid === pid);
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    total += entry.rssBytes;
    stack.push(...(children.get(entry.pid) ?? []));
  }
  return total;
}
