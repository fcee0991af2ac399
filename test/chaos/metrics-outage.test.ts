import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from '../support/cli.js';
import { samples } from '../support/metrics-text.js';

// A worker's ops endpoints while its Redis is frozen (SIGSTOP: the connection
// stays open and nothing answers, the worst case for a client without a
// command timeout). Prometheus gives up on a scrape after 10 s by default, a
// kubelet's probe after 1 s: every answer must come well inside both, and say
// that the fleet figures are old, how old, and which they were.
//
// The bound on each answer is 1 s from request to answer, as asked. The
// worker waits at most 500 ms for a fleet read; the rest is headroom for a
// loaded machine (each answer is one small page built from memory).
const ANSWER_BOUND_MS = 1_000;
const HAS_PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

let redis: TestRedis;
let redisPid: number | undefined;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  // Never leave a frozen server behind: stop() would wait for it.
  if (redisPid !== undefined) process.kill(redisPid, 'SIGCONT');
  await redis.stop();
});


interface Timed {
  readonly status: number;
  readonly text: string;
  readonly ms: number;
}

/** One request, timed from sending to the whole body; gives up at 14 s (longer than any scrape timeout). */
async function timedGet(url: string): Promise<Timed> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(14_000) });
    const text = await response.text();
    return { status: response.status, text, ms: performance.now() - started };
  } catch (error) {
    throw new Error(`${url}: no answer after ${Math.round(performance.now() - started)} ms (${String(error)})`, { cause: error });
  }
}

describe('metrics while Redis is frozen', () => {
  it('/metrics, /healthz and /readyz answer within 1 s; the fleet gauges stay at the last read, read_ok turns 0 and the read age grows; all back once Redis is', { timeout: 240_000 }, async () => {
    const namespace = 'metrics-frozen';
    const port = await freePort();
    const env = cliEnv(redis.url);
    const out = join(mkdtempSync(join(tmpdir(), 'crawlq-metrics-frozen-')), 'results.jsonl');
    const worker = startCli(['worker', '--namespace', namespace, '--allow-private-network', '--out', out, '--metrics-port', String(port), '--stats-interval', '0'], { env });
    let stderr = '';
    worker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(async () => ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined), { timeoutMs: 60_000, what: 'the worker to be ready' });
      // A fleet figure that stays put: one paused group.
      const paused = await runCli(['group', 'pause', 'frozen.test', '--for', '1h', '--namespace', namespace], { env });
      expect(paused.code, paused.stderr).toBe(0);
      const before = await waitFor(async () => {
        const values = samples((await timedGet(`${base}/metrics`)).text);
        return values.get('crawlq_groups{state="paused"}') === 1 && values.get('crawlq_fleet_read_ok') === 1 ? values : undefined;
      }, { timeoutMs: 30_000, what: 'the paused group in the fleet gauges' });

      redisPid = Number(/process_id:(\d+)/.exec(await redis.client().info('server'))?.[1]);
      expect(redisPid).toBeGreaterThan(0);
      process.kill(redisPid, 'SIGSTOP');
      const frozenAt = performance.now();

      // Scrape as a hurried Prometheus would, until read_ok has been 0 for a few seconds.
      const answers: { values: Map<string, number>; text: string; ms: number; at: number }[] = [];
      let zeroSince: number | undefined;
      while (performance.now() - frozenAt < 60_000) {
        const answer = await timedGet(`${base}/metrics`);
        expect(answer.status).toBe(200);
        const values = samples(answer.text);
        answers.push({ values, text: answer.text, ms: answer.ms, at: performance.now() });
        if (values.get('crawlq_fleet_read_ok') === 0) zeroSince ??= performance.now();
        if (zeroSince !== undefined && performance.now() - zeroSince > 3_000) break;
        await sleep(300);
      }
      const health = await timedGet(`${base}/healthz`);
      const readiness = await timedGet(`${base}/readyz`);
      const slowest = Math.max(...answers.map((answer) => answer.ms), health.ms, readiness.ms);
      console.info(`frozen Redis: ${answers.length} scrapes, slowest answer ${Math.round(slowest)} ms; /healthz ${Math.round(health.ms)} ms, /readyz ${Math.round(readiness.ms)} ms`);
      expect(zeroSince, 'crawlq_fleet_read_ok 0 was served').toBeDefined();
      expect(before.get('crawlq_fleet_read_age_seconds')).toBeLessThan(10);
      for (const answer of answers) expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect(health.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect(readiness.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect(health.status).toBe(503);
      expect(health.text).toMatch(/redis/i);
      expect(readiness.status).toBe(503);

      const stale = answers.filter((answer) => answer.values.get('crawlq_fleet_read_ok') === 0);
      // The figures of the last good read, not none and not zeros.
      for (const answer of stale) expect(answer.values.get('crawlq_groups{state="paused"}')).toBe(1);
      // The read's age grows with the outage, as fast as the clock.
      const ages = stale.map((answer) => answer.values.get('crawlq_fleet_read_age_seconds') ?? Number.NaN);
      for (let i = 1; i < ages.length; i += 1) expect(ages[i]).toBeGreaterThanOrEqual(ages[i - 1] ?? Number.NaN);
      const first = stale[0];
      const last = stale.at(-1);
      if (!first || !last) throw new Error('no stale answer');
      expect((ages.at(-1) ?? 0) - (ages[0] ?? 0)).toBeGreaterThanOrEqual((last.at - first.at) / 1000 - 1);
      if (HAS_PROMTOOL) {
        const check = spawnSync('promtool', ['check', 'metrics'], { input: last.text });
        expect(check.status, `${check.stdout.toString()}${check.stderr.toString()}`).toBe(0);
      } else {
        console.warn('promtool not found (Debian package "prometheus"; infra/setup.sh installs it): Prometheus text format not validated by promtool');
      }

      process.kill(redisPid, 'SIGCONT');
      redisPid = undefined;
      const after = await waitFor(async () => {
        const values = samples((await timedGet(`${base}/metrics`)).text);
        return values.get('crawlq_fleet_read_ok') === 1 ? values : undefined;
      }, { timeoutMs: 30_000, what: 'crawlq_fleet_read_ok back to 1' });
      expect(after.get('crawlq_fleet_read_age_seconds')).toBeLessThan(ages.at(-1) ?? 0);
      expect(after.get('crawlq_groups{state="paused"}')).toBe(1);
      // Health has its own PING every half second, so it may turn a moment after the gauges' read.
      for (const path of ['/healthz', '/readyz']) {
        await waitFor(async () => ((await timedGet(`${base}${path}`)).status === 200 ? true : undefined), { timeoutMs: 10_000, what: `${path} back to 200` });
      }
    } finally {
      if (redisPid !== undefined) process.kill(redisPid, 'SIGCONT');
      redisPid = undefined;
      worker.kill('SIGTERM');
      const code = await exited(worker);
      expect(code, stderr).toBe(0);
    }
  });
});
