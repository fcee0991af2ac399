// `pnpm bench server-gate`: what the server level costs inside Redis per page
// at the gate (one acquire and one release, as a page's request makes them),
// read from INFO commandstats, with the server level off, rate only (the
// default), and rate plus a concurrency cap. The limits do not bind (every
// start is admitted), so the figures are the price of the level, not of waits.
import { randomUUID } from 'node:crypto';
import { createGroupLimiter, type LimitPolicyInput } from '@crawlq/group-limiter';
import { startTestRedis } from '@crawlq/testing';
import { redisSnapshot, redisWork } from './redis-stats.js';

const PAGES = 2_000;
const GROUPS = 50;

export async function benchServerGate(log: (line: string) => void): Promise<void> {
  const redis = await startTestRedis();
  const client = redis.client();
  try {
    const group = { rate: null, burst: 1, concurrency: 100 };
    const cases: { name: string; policy: LimitPolicyInput; address: string | undefined }[] = [
      { name: 'off (no address asked)', policy: { defaults: group }, address: undefined },
      { name: 'rate (default: auto)', policy: { defaults: group, servers: { defaults: { rate: { max: 100_000, durationMs: 1000 } } } }, address: '127.0.0.50' },
      { name: 'rate + concurrency', policy: { defaults: group, servers: { defaults: { rate: { max: 100_000, durationMs: 1000 }, concurrency: 1_000 } } }, address: '127.0.0.50' },
    ];
    const perPage: number[] = [];
    log(`server gate: ${PAGES} pages over ${GROUPS} groups on one address, acquire + release each, commands inside Redis (INFO commandstats, scripts' own commands, EVALSHA itself excluded)`);
    for (const { name, policy, address } of cases) {
      const limiter = createGroupLimiter({ redis: redis.client(), prefix: `bench-{${randomUUID()}}` });
      await limiter.setPolicy(policy);
      const before = await redisSnapshot(client);
      for (let page = 0; page < PAGES; page += 1) {
        const admission = await limiter.acquire({ group: `g${page % GROUPS}.test`, leaseId: randomUUID(), maxInlineWaitMs: 100, address });
        if (!admission.admitted) throw new Error(`bench: a start was refused (${admission.reason}); the limits should not bind`);
        await limiter.release(admission.lease, { status: 200, sent: true });
      }
      const work = redisWork(before, await redisSnapshot(client));
      const inside = (work.commands - work.scripts - 2) / PAGES; // the two snapshots' INFO
      perPage.push(inside);
      log(`  ${name.padEnd(24)} ${inside.toFixed(2)} commands/page (${(work.scripts / PAGES).toFixed(2)} scripts/page, ${((work.commands - work.scripts) / PAGES - inside).toFixed(2)} other)`);
    }
    const [off = 0, rate = 0, both = 0] = perPage;
    log(`  server level extra: rate ${(rate - off).toFixed(2)}, rate + concurrency ${(both - off).toFixed(2)} commands/page`);
  } finally {
    client.disconnect();
    await redis.stop();
  }
}
