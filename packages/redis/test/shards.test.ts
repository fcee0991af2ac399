import { describe, expect, it } from 'vitest';
import { clusterSlot, shardNamespaces, shardOfGroup } from '../src/shards.js';

describe('shard layout', () => {
  it('computes the slot Redis Cluster computes (CLUSTER KEYSLOT reference values)', () => {
    // Reference values from the Redis Cluster specification's CRC16 (XMODEM): "123456789" -> 0x31C3.
    expect(clusterSlot('123456789')).toBe(0x31c3 % 16_384);
    expect(clusterSlot('foo')).toBe(12_182);
    expect(clusterSlot('bar')).toBe(5_061);
  });

  it('one shard is the namespace itself: a crawl of one shard keeps its old keys', () => {
    expect(shardNamespaces('crawl', 1)).toEqual(['crawl']);
  });

  it('spreads S shards over S equal slot ranges, one tag each, never the namespace itself', () => {
    for (const shards of [2, 3, 6, 16]) {
      const names = shardNamespaces('crawl', shards);
      expect(names).toHaveLength(shards);
      expect(new Set(names).size).toBe(shards);
      names.forEach((name, index) => {
        expect(name.startsWith(`crawl#${index}.`)).toBe(true);
        const slot = clusterSlot(name);
        expect(slot).toBeGreaterThanOrEqual(Math.floor((index * 16_384) / shards));
        expect(slot).toBeLessThan(Math.floor(((index + 1) * 16_384) / shards));
      });
    }
  });

  it('maps a group to one shard, the same every time, and uses every shard', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i += 1) {
      const shard = shardOfGroup(`host-${i}.example`, 3);
      expect(shard).toBe(shardOfGroup(`host-${i}.example`, 3));
      counts[shard]! += 1;
    }
    for (const count of counts) expect(count).toBeGreaterThan(800);
    expect(shardOfGroup('anything', 1)).toBe(0);
  });

  it('refuses a shard count that is not a positive integer', () => {
    expect(() => shardNamespaces('crawl', 0)).toThrow(RangeError);
    expect(() => shardNamespaces('crawl', 1.5)).toThrow(RangeError);
  });
});
