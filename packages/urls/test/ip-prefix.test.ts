import { describe, expect, it } from 'vitest';
import { cidrContains, InvalidIpError, ipBits, parseCidr, serverOfAddress } from '../src/index.js';

const PREFIXES = { v4: 32, v6: 64 };

describe('serverOfAddress', () => {
  it('keys IPv4 by address and IPv6 by its /64, an IPv4-mapped address as IPv4', () => {
    expect(serverOfAddress('203.0.113.7', PREFIXES)).toBe('203.0.113.7');
    expect(serverOfAddress('2001:db8:1:2:aaaa::1', PREFIXES)).toBe('2001:db8:1:2::/64');
    expect(serverOfAddress('2001:db8:1:2:bbbb::9', PREFIXES)).toBe('2001:db8:1:2::/64');
    expect(serverOfAddress('::ffff:203.0.113.7', PREFIXES)).toBe('203.0.113.7');
    expect(serverOfAddress('[::1]', { v4: 32, v6: 128 })).toBe('::1');
    expect(serverOfAddress('203.0.113.7', { v4: 24, v6: 64 })).toBe('203.0.113.0/24');
  });

  it('refuses text that is no address', () => {
    expect(() => serverOfAddress('example.com', PREFIXES)).toThrow(InvalidIpError);
  });
});

describe('parseCidr', () => {
  it('normalizes the network and matches addresses of its family only', () => {
    const range = parseCidr('104.16.5.9/13');
    expect(range.text).toBe('104.16.0.0/13');
    expect(cidrContains(range, ipBits('104.23.255.1'))).toBe(true);
    expect(cidrContains(range, ipBits('104.24.0.1'))).toBe(false);
    expect(cidrContains(range, ipBits('2606:4700::1'))).toBe(false);
    const v6 = parseCidr('2606:4700::/32');
    expect(cidrContains(v6, ipBits('2606:4700:10::6816:1'))).toBe(true);
    expect(parseCidr('127.0.0.2').text).toBe('127.0.0.2/32');
  });

  it('refuses a bad prefix', () => {
    expect(() => parseCidr('10.0.0.0/33')).toThrow(InvalidIpError);
    expect(() => parseCidr('10.0.0.0/x')).toThrow(InvalidIpError);
  });
});
