import { SeenSet } from '@crawlq/frontier';
import { startTestRedis } from '@crawlq/testing';
import { urlFingerprint } from '@crawlq/urls';
const redis = await startTestRedis();
const client = redis.client();
const N = 100000;
const fps = Array.from({ length: N }, (_, i) => urlFingerprint(`https://h${i % 1000}.example/p${i}`));
const fresh = Array.from({ length: N }, (_, i) => urlFingerprint(`https://h${i % 1000}.example/q${i}`));
for (const mode of [{ mode: 'exact' as const }, { mode: 'bloom' as const, expectedUrls: N, falsePositiveRate: 0.001 }]) {
  await client.config('RESETSTAT');
  const s = new SeenSet({ redis: client, namespace: 'ns-' + mode.mode, mode });
  let tr = 0, tm = 0;
  const t0 = performance.now();
  for (let i = 0; i < N; i += 1000) {
    const b = fps.slice(i, i + 1000);
    const a = performance.now();
    await s.reserve(b.map((fingerprint) => ({ fingerprint, group: 'g' })), { maxPages: 0, maxPagesPerGroup: 0 });
    const m = performance.now();
    await s.mark(b);
    tm += performance.now() - m; tr += m - a;
  }
  console.log(mode.mode, (N / (performance.now() - t0) * 1000).toFixed(0), 'reserve ms', tr.toFixed(0), 'mark ms', tm.toFixed(0));
  const stats = await client.info('commandstats');
  console.log(stats.split('\n').filter((l) => /evalsha|getrange|bitfield|hsetnx|hexists|setbit|exists/.test(l)).join('\n'));
  console.log((await s.has(fps)).filter(Boolean).length, 'of', N, 'inserted found;', (await s.has(fresh)).filter(Boolean).length, 'false positives of', N, JSON.stringify(await s.describe()));
}
await redis.stop();
