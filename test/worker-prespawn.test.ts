import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliArgs, cliEnv, exited, REPO_ROOT } from './support/cli.js';

// `crawl` starts its workers ahead (a worker's start is mostly
// loading its code): each loads, says it waits, and touches Redis only once
// `crawl` says start, so it never joins a namespace `crawl` is still clearing.
// Gone before that, `crawl` leaves a waiting worker nothing to do but exit.

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.stop();
});

/** A worker as `crawl` starts one ahead: an IPC channel, the handed-over config file, told to wait. */
function startWaitingWorker(): { child: ChildProcess; handover: string; said: string[] } {
  const handover = join(mkdtempSync(join(tmpdir(), 'crawlq-prespawn-')), 'worker-config.json');
  writeFileSync(handover, '{}');
  const child = spawn(process.execPath, cliArgs(['worker', '--namespace', 'prespawn', '--config', handover]), {
    cwd: REPO_ROOT,
    env: cliEnv(redis.url, { CRAWLQ_AWAIT_START: '1', CRAWLQ_HANDOVER_FILE: handover }),
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  const said: string[] = [];
  child.on('message', (message) => said.push(typeof message === 'string' ? message : JSON.stringify(message)));
  return { child, handover, said };
}

/** Clients connected to the test's Redis, this test's own connection left out. */
async function otherClients(): Promise<number> {
  const client = redis.client();
  try {
    const list = String(await client.client('LIST'));
    return list.split('\n').filter((line) => line.trim() !== '').length - 1;
  } finally {
    client.disconnect();
  }
}

describe('a worker started ahead', () => {
  it('connects to Redis only once told to start, then runs as any worker', { timeout: 120_000 }, async () => {
    const { child, said } = startWaitingWorker();
    try {
      await waitFor(() => (said.includes('crawlq:waiting') ? true : undefined), { timeoutMs: 60_000, what: 'the worker to wait' });
      expect(await otherClients()).toBe(0);
      child.send('crawlq:start');
      await waitFor(async () => ((await otherClients()) > 0 ? true : undefined), { timeoutMs: 60_000, what: 'the worker to connect' });
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
      await exited(child);
    }
  });

  it('exits, removing the handed-over config file, when `crawl` is gone before the start', { timeout: 120_000 }, async () => {
    const { child, handover, said } = startWaitingWorker();
    await waitFor(() => (said.includes('crawlq:waiting') ? true : undefined), { timeoutMs: 60_000, what: 'the worker to wait' });
    child.disconnect();
    expect(await exited(child)).toBe(0);
    expect(existsSync(handover)).toBe(false);
    expect(await otherClients()).toBe(0);
  });
});
