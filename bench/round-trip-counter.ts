// Counts the commands clients send to a Redis server (MONITOR), in a process
// of its own so that parsing thousands of MONITOR lines a second does not slow
// the benchmark's web server, whose request times judge the politeness.
// Usage: round-trip-counter.ts <redis url> <ignored source ip:port>; prints a
// line "ready", and on SIGTERM one JSON line: { roundTrips, breakdown }.
import { Redis } from 'ioredis';

const [url, ignoredSource] = process.argv.slice(2);
if (!url) throw new Error('usage: round-trip-counter.ts <redis url> [ignored source]');
const monitor = await new Redis(url).monitor();
let roundTrips = 0;
const breakdown = new Map<string, number>();
// A MULTI ... EXEC block is written in one go: one round trip.
const inMulti = new Set<string>();
monitor.on('monitor', (_time: string, args: string[], source: string) => {
  if (source === 'lua' || source === ignoredSource) return;
  const command = args[0]?.toLowerCase() ?? '';
  if (command === 'multi') {
    inMulti.add(source);
    return;
  }
  if (command === 'exec' || command === 'discard') inMulti.delete(source);
  else if (inMulti.has(source)) return;
  roundTrips += 1;
  const key = command === 'evalsha' ? `evalsha ${args[1]?.slice(0, 8) ?? ''}` : command;
  breakdown.set(key, (breakdown.get(key) ?? 0) + 1);
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  monitor.disconnect();
  const top = Object.fromEntries([...breakdown].sort((a, b) => b[1] - a[1]).slice(0, 12));
  process.stdout.write(`${JSON.stringify({ roundTrips, breakdown: top })}\n`, () => process.exit(0));
});
