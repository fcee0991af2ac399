import { describe, expect, it } from 'vitest';
import { queuePrefix, stateKeyPrefix } from '../src/index.js';

describe('namespace keys', () => {
  it('keeps every key of a namespace, BullMQ\'s and crawlq\'s, under one hash tag', () => {
    expect(queuePrefix('c1')).toBe('{c1}');
    expect(stateKeyPrefix('c1').startsWith('{c1}:')).toBe(true);
  });
});
