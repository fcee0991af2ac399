import { describe, expect, it } from 'vitest';
import { InvalidIpError, classifyIp, hostMatchesGlob, isHostGlob, isPublicIp, politenessGroupOf } from '@crawlq/urls';
import type { IpClass } from '@crawlq/urls';

describe('hostMatchesGlob', () => {
  it.each([
    ['a.example.com', '*.example.com', true],
    ['a.b.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['badexample.com', '*.example.com', false],
    ['example.com', 'example.com', true],
    ['EXAMPLE.com', 'example.COM', true],
    ['www.example.com', 'example.com', false],
    ['anything.at.all', '*', true],
    ['example.com:8080', 'example.com', true],
    ['example.com:8080', 'example.com:8080', true],
    ['example.com:8081', 'example.com:8080', false],
    ['example.com', 'example.com:8080', false],
    ['a.example.com:3000', '*:3000', true],
    ['[::1]:3000', '[::1]', true],
    ['example.com.', 'example.com', true],
    ['Example.COM.', 'example.com', true],
    ['anything.test', '*', true],
    ['a.example.com:8080', '*.example.com', true],
    ['a.example.com:8080', '*.example.com:8080', true],
    ['a.example.com:8081', '*.example.com:8080', false],
    ['[::1]:3000', '[::1]:3001', false],
  ] as const)('%s vs %s -> %s', (host, glob, expected) => {
    expect(hostMatchesGlob(host, glob)).toBe(expected);
  });
});

describe('isHostGlob', () => {
  it('recognises *, *.suffix and exact hosts, each optionally with a port', () => {
    expect(['*', '*.example.com', 'example.com', 'Example.COM.', '*:8080', 'example.com:8080', '*.example.com:8080', '[::1]:3000'].every(isHostGlob)).toBe(true);
  });

  it('refuses other uses of *, whitespace and empty hosts', () => {
    expect(['', 'exa*mple.com', '*.', '*.*.com', 'a b', ':8080', '*.:80'].some(isHostGlob)).toBe(false);
  });
});

describe('politenessGroupOf', () => {
  const rules = [
    { match: 'a.example.com:9090', group: 'nine' },
    { match: '*.example.com', group: 'shared' },
  ];

  it('takes the first rule matching the host, a port included, else the host or domain key', () => {
    expect(politenessGroupOf('http://a.example.com:8080/x', { groupBy: 'host', groupRules: rules })).toBe('shared');
    expect(politenessGroupOf('http://a.example.com:9090/x', { groupBy: 'host', groupRules: rules })).toBe('nine');
    expect(politenessGroupOf('http://b.example.com:9090/x', { groupBy: 'host', groupRules: rules })).toBe('shared');
    expect(politenessGroupOf('http://other.test:8080/x', { groupBy: 'host', groupRules: rules })).toBe('other.test:8080');
    expect(politenessGroupOf('http://a.b.other.co.uk/x', { groupBy: 'domain', groupRules: rules })).toBe('other.co.uk');
    expect(politenessGroupOf('http://a.b.other.co.uk/x', { groupBy: 'domain' })).toBe('other.co.uk');
  });
});

describe('classifyIp', () => {
  const table: readonly (readonly [string, IpClass])[] = [
    // IPv4
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.1', 'public'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    // IPv6
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['4000::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
  ];

  it.each(table)('%s is %s', (address, expected) => {
    expect(classifyIp(address)).toBe(expected);
    expect(isPublicIp(address)).toBe(expected === 'public');
  });

  it.each(['', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1::2::3', '1:2:3:4:5:6:7:8:9', '::g', '1:2:3:4:5:6:7'])(
    '%j is not an address',
    (text) => {
      expect(() => classifyIp(text)).toThrow(InvalidIpError);
      expect(isPublicIp(text)).toBe(false);
    },
  );
});
