import { describe, expect, it } from 'vitest';
import { colorEnabled, createLogger, formatPrettyLine, formatStatsLine, lineLogger, resolveFormat, startStatsLine } from '../src/index.js';

function capture(isTTY = false): { stream: { write(text: string): boolean; isTTY: boolean }; lines: string[] } {
  const lines: string[] = [];
  return { stream: { write: (text: string) => lines.push(text) > 0, isTTY }, lines };
}

describe('createLogger', () => {
  it('writes one JSON object per line with time, level name, msg, pid, worker and namespace', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ worker: 'worker-3', namespace: 'ns', stream });
    logger.info('hello');
    logger.warn({ group: 'a.test' }, 'careful');
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(first).toMatchObject({ level: 'info', msg: 'hello', pid: process.pid, worker: 'worker-3', namespace: 'ns' });
    expect(new Date(String(first.time)).toISOString()).toBe(first.time);
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ level: 'warn', msg: 'careful', group: 'a.test' });
  });

  it('drops lines below the level and redacts credentials', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ worker: 'w', namespace: 'ns', stream, level: 'warn' });
    logger.info('hidden');
    logger.debug('hidden too');
    logger.error({ smtp: { password: 'hunter2' } }, 'visible');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('hunter2');
  });

  it('masks a URL password in a message however spelt, JSON lines staying JSON and pretty lines too', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ worker: 'w', namespace: 'ns', stream });
    logger.warn({ target: 'redis//:p"w/x@cache.test' }, 'mail ops@example.test: cannot reach redis://:p"w/x#y@cache.test:6379');
    const line = JSON.parse(lines[0] ?? '') as { msg: string; target: string };
    expect(line.msg).toBe('mail ops@example.test: cannot reach redis://:***@cache.test:6379');
    expect(line.target).toBe('redis//:***@cache.test');
    const pretty = capture(true);
    createLogger({ worker: 'w', namespace: 'ns', stream: pretty.stream }).error('PostgreSQL at postgres://u:a b/c@db.test/x refused');
    expect(pretty.lines.join('')).toContain('postgres://u:***@db.test/x refused');
    expect(pretty.lines.join('')).not.toContain('a b/c');
  });

  it('chooses pretty lines on a terminal and JSON elsewhere unless told', () => {
    expect(resolveFormat('auto', { write: () => true, isTTY: true })).toBe('pretty');
    expect(resolveFormat('auto', { write: () => true })).toBe('json');
    expect(resolveFormat('json', { write: () => true, isTTY: true })).toBe('json');
    const { stream, lines } = capture(true);
    const logger = createLogger({ worker: 'crawl', namespace: 'ns', stream, color: false });
    lineLogger(logger)('dead-lettered http://a.test/', 'warn');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}crawl dead-lettered http:\/\/a\.test\/\n$/);
  });

  it('colours pretty lines on a terminal only, and never with NO_COLOR', () => {
    const sgr = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`);
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    // The convention: set to anything but the empty string.
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);

    const coloured = capture(true);
    lineLogger(createLogger({ worker: 'crawl', namespace: 'ns', stream: coloured.stream, color: true }))('slow down', 'warn');
    expect(coloured.lines[0]).toMatch(sgr);
    // The colour codes wrap the same text: without them it is the plain line.
    expect(coloured.lines[0]?.replace(new RegExp(sgr.source, 'g'), '')).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}crawl slow down\n$/);
    const plain = capture(true);
    lineLogger(createLogger({ worker: 'crawl', namespace: 'ns', stream: plain.stream, color: false }))('slow down', 'warn');
    expect(plain.lines[0]).not.toMatch(sgr);
  });
});

describe('formatPrettyLine', () => {
  it('shows extra fields as key=value and passes non-JSON through', () => {
    const line = formatPrettyLine(JSON.stringify({ time: '2026-01-02T03:04:05.678Z', level: 'info', msg: 'm', pid: 1, worker: 'w', namespace: 'n', group: 'g', n: 2 }));
    expect(line).toBe('03:04:05.678 INFO  w m group=g n=2\n');
    expect(formatPrettyLine('plain')).toBe('plain\n');
  });
});

describe('stats line', () => {
  it('names pages, rate, statuses, retries, dead letters and why groups wait', () => {
    const text = formatStatsLine({ pages: 12, statuses: { '4xx': 2, '2xx': 10 }, retries: 3, deadLetters: 1, groupsWaiting: { paused: 2, 'at their concurrency cap': 0 } }, 1.5);
    expect(text).toBe('stats: 12 pages (1.50/s), statuses 2xx 10, 4xx 2, retries 3, dead letters 1, groups waiting: 2 paused');
    expect(formatStatsLine({ pages: 0, statuses: {}, retries: 0, deadLetters: 0 }, 0)).toContain('groups waiting: unknown');
  });

  it('logs lines at least an interval apart and stops when told', async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ worker: 'w', namespace: 'ns', stream });
    let pages = 0;
    const stop = startStatsLine({ intervalMs: 50, logger, read: () => Promise.resolve({ pages: (pages += 5), statuses: {}, retries: 0, deadLetters: 0 }) });
    while (lines.length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    const count = lines.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lines).toHaveLength(count);
    const times = lines.map((line) => Date.parse((JSON.parse(line) as { time: string }).time));
    for (let i = 1; i < times.length; i += 1) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(49);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ stats: { pages: 5 } });
  });
});
