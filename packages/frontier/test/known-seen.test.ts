import { describe, expect, it } from 'vitest';
import { KnownSeen } from '../src/known-seen.js';

describe('KnownSeen', () => {
  it('holds what was added, at most its capacity, and keeps entries that are read', () => {
    const known = new KnownSeen(4);
    for (const fp of ['a', 'b']) known.add(fp);
    expect(known.has('a')).toBe(true);
    expect(known.has('z')).toBe(false);
    // 'c' starts a new generation: 'a' and 'b' are old, and 'a' is read back into the young one.
    known.add('c');
    expect(known.has('a')).toBe(true);
    known.add('d'); // the young generation (c, a) is full: it becomes the old one, 'b' is dropped
    expect(known.has('b')).toBe(false);
    expect(known.has('a')).toBe(true);
    expect(known.has('c')).toBe(true);
    for (let i = 0; i < 1000; i += 1) known.add(`x${i}`);
    expect(known.size).toBeLessThanOrEqual(4);
  });

  it('capacity 0 holds nothing', () => {
    const known = new KnownSeen(0);
    known.add('a');
    expect(known.has('a')).toBe(false);
    expect(known.size).toBe(0);
  });
});
