// What Redis itself reports about the work it did, as deltas between two snapshots.
import type { Redis } from 'ioredis';

export interface RedisSnapshot {
  /** Calls per command (`INFO commandstats`): those run inside Lua scripts included. */
  readonly calls: ReadonlyMap<string, number>;
  /** `total_commands_processed`: also counts commands run inside scripts (checked on Redis 7.0). */
  readonly commandsProcessed: number;
  /** used_cpu_user + used_cpu_sys of the server, in seconds. */
  readonly cpuSeconds: number;
  readonly usedMemory: number;
}

const field = (info: string, name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);

export async function redisSnapshot(client: Redis): Promise<RedisSnapshot> {
  const info = await client.info('all');
  const calls = new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, count]) => [name ?? '', Number(count)]));
  return {
    calls,
    commandsProcessed: field(info, 'total_commands_processed'),
    cpuSeconds: field(info, 'used_cpu_user') + field(info, 'used_cpu_sys'),
    usedMemory: field(info, 'used_memory'),
  };
}

export interface RedisWork {
  /** Commands Redis executed, those inside scripts included, per command name. */
  readonly calls: ReadonlyMap<string, number>;
  readonly commands: number;
  /** EVAL/EVALSHA/FCALL calls: each runs a script whose own commands are in `commands` too. */
  readonly scripts: number;
  readonly cpuSeconds: number;
}

const SCRIPT_CALLS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

export function redisWork(before: RedisSnapshot, after: RedisSnapshot): RedisWork {
  const calls = new Map<string, number>();
  for (const [name, count] of after.calls) {
    const delta = count - (before.calls.get(name) ?? 0);
    // Everything counts: the one INFO of the bench's own first snapshot is noise next to thousands of pages.
    if (delta > 0) calls.set(name, delta);
  }
  let commands = 0;
  let scripts = 0;
  for (const [name, count] of calls) {
    commands += count;
    if (SCRIPT_CALLS.has(name)) scripts += count;
  }
  return { calls, commands, scripts, cpuSeconds: after.cpuSeconds - before.cpuSeconds };
}

/** The `n` most called commands, as "name calls-per-unit". */
export function topCalls(work: RedisWork, per: number, n = 8): string {
  return [...work.calls]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `${name} ${(count / per).toFixed(2)}`)
    .join(', ');
}
