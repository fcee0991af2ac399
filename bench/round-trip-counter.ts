// Counts the commands clients send to a Redis server (MONITOR), in a process
// of its own so that parsing thousands of MONITOR lines a second does not slow
// the benchmark's web server, whose request times judge the politeness.
// Usage: round-trip-counter.ts <redis url> <ignored source ip:port>; prints a
// line "ready", and on SIGTERM one JSON line: { roundTrips, breakdown, scripts }.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

const [url, ignoredSource] = process.argv.slice(2);
if (!url) throw new Error('usage: round-trip-counter.ts <redis url> [ignored source]');
const monitor = await new Redis(url).monitor();
let roundTrips = 0;
const breakdown = new Map<string, number>();
// A MULTI ... EXEC block is written in one go: one round trip.
const inMulti = new Set<string>();

/** Per script (by SHA1): its runs and the commands run inside it. */
interface ScriptWork {
  runs: number;
  readonly inner: Map<string, number>;
}
const scripts = new Map<string, ScriptWork>();
/** Script names, read off the source the first EVAL of each script sends (the server starts empty). */
const scriptNames = new Map<string, string>();
// MONITOR shows a script's own line first, then the commands it runs (source
// "lua"), with nothing between: Redis runs one script at a time.
let runningScript: ScriptWork | undefined;
let ignoringScript = false;

/** MONITOR quotes arguments as Redis' sdscatrepr does; this undoes it, so a script's source hashes to its SHA1. */
function unquote(text: string): string {
  const named: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', '\\': '\\', '"': '"' };
  return text.replace(/\\(x[0-9a-f]{2}|.)/g, (escape: string, code: string) => {
    if (code.length === 3) return String.fromCharCode(Number.parseInt(code.slice(1), 16));
    return named[code] ?? escape;
  });
}

/**
 * crawlq's scripts: `-- script: name` (written inline), or the name their
 * `.lua` file's header opens with (`--[[` then `  frontier-release:`); else
 * the first line of BullMQ's leading comment.
 */
function nameOf(source: string): string {
  const ours = /^-- script: (\S+)/m.exec(source)?.[1] ?? /^--\[\[\s*\n\s*([a-z0-9]+(?:-[a-z0-9]+)+):\s*\n/.exec(source)?.[1];
  if (ours) return ours;
  const firstLine = source.replace(/^\s*--\[\[\s*/, '').split('\n')[0]?.trim() ?? '';
  return `bullmq: ${firstLine.slice(0, 48)}`;
}

function scriptWork(sha: string): ScriptWork {
  let work = scripts.get(sha);
  if (!work) {
    work = { runs: 0, inner: new Map() };
    scripts.set(sha, work);
  }
  return work;
}

monitor.on('monitor', (_time: string, args: string[], source: string) => {
  const command = args[0]?.toLowerCase() ?? '';
  if (source === 'lua') {
    if (runningScript && !ignoringScript) runningScript.inner.set(command, (runningScript.inner.get(command) ?? 0) + 1);
    return;
  }
  runningScript = undefined;
  ignoringScript = source === ignoredSource;
  if (command === 'eval' || command === 'evalsha') {
    let sha = args[1] ?? '';
    if (command === 'eval') {
      const script = unquote(args[1] ?? '');
      sha = createHash('sha1').update(script, 'latin1').digest('hex');
      if (!scriptNames.has(sha)) scriptNames.set(sha, nameOf(script));
    }
    runningScript = scriptWork(sha);
    if (!ignoringScript) runningScript.runs += 1;
  }
  if (ignoringScript) return;
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
  const byScript = [...scripts]
    .filter(([, work]) => work.runs > 0)
    .map(([sha, work]) => ({
      name: scriptNames.get(sha) ?? `sha ${sha.slice(0, 8)}`,
      runs: work.runs,
      inner: Object.fromEntries([...work.inner].sort((a, b) => b[1] - a[1])),
    }))
    .sort((a, b) => sum(b.inner) - sum(a.inner));
  process.stdout.write(`${JSON.stringify({ roundTrips, breakdown: top, scripts: byScript })}\n`, () => process.exit(0));
});

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((total, count) => total + count, 0);
}
