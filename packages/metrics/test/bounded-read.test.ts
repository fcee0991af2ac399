import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BoundedRead } from '../src/bounded-read.js';

// A read whose answers the test hands out: the server that stops answering
// is a promise that is never settled.
function scripted() {
  const calls: { resolve: (value: number) => void; reject: (error: Error) => void }[] = [];
  const read = () => new Promise<number>((resolve, reject) => calls.push({ resolve, reject }));
  return { calls, read };
}

describe('BoundedRead', () => {
  it('keeps the last good value through a read that never answers, marks it not ok once the timeout passes, and starts one read at a time', async () => {
    const { calls, read } = scripted();
    const reads = new BoundedRead(read, { maxAgeMs: 0, timeoutMs: 2_000, what: 'test read' });
    const first = reads.current(10_000);
    calls[0]?.resolve(7);
    expect(await first).toMatchObject({ value: 7, ok: true });

    // The server stops answering: an asker gets the old value after its own wait, not the read's
    // (still ok: the read is not yet overdue; the timeout is long so that a busy machine keeps it so).
    const waited = await reads.current(20);
    expect(waited).toMatchObject({ value: 7, ok: true });
    expect(calls).toHaveLength(2);
    // A second asker joins the read under way instead of starting another.
    await reads.current(0);
    expect(calls).toHaveLength(2);
    await sleep(2_100);
    const overdue = await reads.current(20);
    expect(overdue.ok).toBe(false);
    expect(overdue.value).toBe(7);
    expect(overdue.error?.message).toBe('no answer to the test read within 2000 ms');
    // The timed-out read freed its place: that asker started a new one.
    expect(calls).toHaveLength(3);
    // A late answer to the abandoned read changes nothing; the new read's answer does.
    calls[1]?.resolve(8);
    calls[2]?.resolve(9);
    await sleep(0);
    expect(reads.status()).toMatchObject({ value: 9, ok: true, error: undefined });
  });

  it('read() rejects with the failure, and is not ok before a first good read', async () => {
    const { calls, read } = scripted();
    const reads = new BoundedRead(read, { maxAgeMs: 1_000, timeoutMs: 5_000, what: 'test read' });
    expect(reads.status()).toMatchObject({ value: undefined, ok: false });
    const failing = reads.read();
    calls[0]?.reject(new Error('refused'));
    await expect(failing).rejects.toThrow('refused');
    expect(reads.status()).toMatchObject({ ok: false, error: new Error('refused') });
    const next = reads.read();
    calls[1]?.resolve(3);
    expect(await next).toBe(3);
    // Fresh within maxAgeMs: served without a read.
    expect(await reads.read()).toBe(3);
    expect(calls).toHaveLength(2);
  });
});
