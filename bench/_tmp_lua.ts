import { startTestRedis } from '@crawlq/testing';
import { urlFingerprint } from '@crawlq/urls';
const redis = await startTestRedis();
const c = redis.client();
const fps = Array.from({ length: 1000 }, (_, i) => Buffer.from(urlFingerprint(`https://h.example/p${i}`).slice(1), 'base64url'));
const head = `
local bits = 1437759
local k = 10
local n = 0
local args = {}
for j = 1, #ARGV do
  local b = {string.byte(ARGV[j], 1, 12)}
  local h1 = (((((b[1] * 256 + b[2]) * 256 + b[3]) * 256 + b[4]) * 256 + b[5]) * 256 + b[6]) % bits
  local h2 = (((((b[7] * 256 + b[8]) * 256 + b[9]) * 256 + b[10]) * 256 + b[11]) * 256 + b[12]) % bits
  for i = 0, k - 1 do
    local pos = (h1 + i * h2 + (i * i * i - i) / 6) % bits
`;
const variants: Record<string, string> = {
  compute: head + `n = n + pos end end return n`,
  tables: head + `local m = #args args[m+1]='GET' args[m+2]='u1' args[m+3]=pos end end return #args`,
  tablesStr: head + `local m = #args args[m+1]='GET' args[m+2]='u1' args[m+3]=string.format('%d', pos) end end return #args`,
  bitfield: head + `local m = #args args[m+1]='GET' args[m+2]='u1' args[m+3]=pos end end
    local z = 0
    for f = 1, #args, 4800 do local r = redis.call('BITFIELD_RO', 'bf', unpack(args, f, math.min(f + 4799, #args))) z = z + #r end return z`,
  getbit: head + `n = n + redis.call('GETBIT', 'bf', pos) end end return n`,
};
await c.setbit('bf', 1437759, 0);
for (const [name, src] of Object.entries(variants)) {
  const t0 = performance.now();
  for (let r = 0; r < 50; r++) await c.eval(src, 0, ...fps);
  console.log(name, ((performance.now() - t0) / 50).toFixed(2), 'ms per 1000 urls');
}
await redis.stop();
