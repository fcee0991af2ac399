import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childPids, countedBytes, proportionalBytes, treeMemoryBytes, treePids } from '../src/process-tree.js';

const rssOf = (pid: number): number => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

describe('a process tree’s memory', () => {
  // A parent with three children, all the same Node.js binary: they share its code pages, as a browser's processes share theirs.
  let parent: ChildProcess;
  beforeAll(async () => {
    parent = spawn(process.execPath, ['-e', "for (let i = 0; i < 3; i += 1) require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
    for (let tries = 0; childPids(parent.pid ?? -1).length < 3 && tries < 300; tries += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  });
  afterAll(() => {
    for (const pid of childPids(parent.pid ?? -1)) process.kill(pid, 'SIGKILL');
    parent.kill('SIGKILL');
  });

  it('counts shared pages once (PSS), not once per process (RSS)', () => {
    const pids = [parent.pid ?? -1, ...childPids(parent.pid ?? -1)];
    expect(pids).toHaveLength(4);
    for (const pid of pids) {
      const pss = proportionalBytes(pid);
      expect(pss).toBeGreaterThan(0);
      expect(pss).toBeLessThanOrEqual(rssOf(pid));
    }
    const rssSum = pids.reduce((sum, pid) => sum + rssOf(pid), 0);
    const tree = treeMemoryBytes(parent.pid ?? -1);
    expect(tree).toBeGreaterThan(0);
    // Four processes sharing one binary: well below the sum of their resident sizes.
    expect(tree).toBeLessThan(rssSum * 0.9);
  });

  it('lists the tree: the process first, then its children', () => {
    const children = childPids(parent.pid ?? -1);
    const tree = treePids(parent.pid ?? -1);
    expect(tree[0]).toBe(parent.pid);
    expect(new Set(tree.slice(1))).toEqual(new Set(children));
    expect(children).toHaveLength(3);
  });

  it('is 0 for a process that is not there', () => {
    expect(treeMemoryBytes(2 ** 22 + 12_345)).toBe(0);
    expect(proportionalBytes(2 ** 22 + 12_345)).toBeUndefined();
  });

  it('a process whose PSS cannot be read counts nothing where the kernel reports PSS (it is exiting), its resident size where the kernel has no PSS at all', () => {
    expect(countedBytes(40e6, 300e6, true)).toBe(40e6);
    // Read a moment before it exited, its resident size counts every page it shares with the rest of the tree.
    expect(countedBytes(undefined, 300e6, true)).toBe(0);
    expect(countedBytes(undefined, 300e6, false)).toBe(300e6);
  });
});
