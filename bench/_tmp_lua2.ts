import { startTestRedis } from '@crawlq/testing';
const redis = await startTestRedis();
const c = redis.client();
const offs = Array.from({ length: 10000 }, () => String(Math.floor(Math.random() * 1437759)));
const inter = offs.flatMap((o) => ['GET', 'u1', o]);
await c.setbit('bf', 1437759, 0);
const variants: [string, string, string[]][] = [
  ['A getbit per offset', `local n=0 for i=1,#ARGV do n = n + redis.call('GETBIT','bf',ARGV[i]) end return n`, offs],
  ['B interleaved by JS', `local z=0 for f=1,#ARGV,4800 do local r = redis.call('BITFIELD_RO','bf',unpack(ARGV,f,math.min(f+4799,#ARGV))) z=z+#r end return z`, inter],
  ['C lua builds', `local a={} for i=1,#ARGV do local m=#a a[m+1]='GET' a[m+2]='u1' a[m+3]=ARGV[i] end local z=0 for f=1,#a,4800 do local r = redis.call('BITFIELD_RO','bf',unpack(a,f,math.min(f+4799,#a))) z=z+#r end return z`, offs],
  ['D noop with 10k args', `return #ARGV`, offs],
  ['E noop with 30k args', `return #ARGV`, inter],
];
for (const [name, src, args] of variants) {
  await c.eval(src, 0, ...args);
  const t0 = performance.now();
  for (let r = 0; r < 30; r++) await c.eval(src, 0, ...args);
  console.log(name, ((performance.now() - t0) / 30).toFixed(2), 'ms per 10k bits');
}
await redis.stop();
