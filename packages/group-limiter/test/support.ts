import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { defineLuaScript, luaFiles, REDIS_LUA } from '@crawlq/redis';
import { LIMITER_LUA, ScriptCode, type GroupLimiter } from '../src/index.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh key prefix per test, with a hash tag like production prefixes. */
export const testPrefix = (): string => `test-{${randomUUID()}}`;

export { maxInWindow } from '@crawlq/testing';

/** Counts the commands (round trips) a client sends from now on. */
export function countCommands(client: Redis): { readonly count: number; reset(): void } {
  let count = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    count += 1;
    return send(...args);
  };
  return {
    get count() {
      return count;
    },
    reset() {
      count = 0;
    },
  };
}

/**
 * A script run through `runPaced` that returns each group's spacing and cap
 * as the pacing state gives them (Crawl-delay and adaptive pace applied):
 * what the frontier's release step spaces a group's jobs by.
 */
const pacedProbeScript = defineLuaScript({
  name: 'test-paced-probe',
  keys: 'variadic',
  file: luaFiles({
    package: '@crawlq/group-limiter-test',
    root: new URL('.', import.meta.url),
    uses: [REDIS_LUA, LIMITER_LUA],
    made: {
      'paced-probe.lua': `
--- @include "@crawlq/redis/lua/clock.lua"
--- @include "@crawlq/group-limiter/lua/paced-groups.lua"
--- @include "@crawlq/group-limiter/lua/policy-check.lua"
local now = now_ms()
local out = {${ScriptCode.Ok}}
for i = 1, PACED_D do
  local g = paced_group(i, now)
  out[#out + 1] = g.interval
  out[#out + 1] = g.conc or -1
end
return out
`,
    },
  }).file('paced-probe.lua'),
});

/** Each group's paced interval (ms) and concurrency cap (null: none), as runPaced callers see them. */
export async function pacedLimits(limiter: GroupLimiter, groups: readonly string[]): Promise<{ intervalMs: number; concurrency: number | null }[]> {
  const reply = (await limiter.runPaced(pacedProbeScript, groups, { operation: 'probe', keys: [], args: [] })).map(Number);
  return groups.map((_, i) => {
    const concurrency = reply[2 * i + 1] ?? -1;
    return { intervalMs: reply[2 * i] ?? Number.NaN, concurrency: concurrency <= 0 ? null : concurrency };
  });
}
