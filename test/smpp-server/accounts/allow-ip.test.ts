/**
 * An SMPP account's allowed addresses: CIDR blocks parsed and checked (IPv4, IPv6, a bare address
 * as /32 or /128), IPv4-mapped IPv6 peers matched against IPv4 blocks, an empty list allowing all.
 */
import { describe, expect, it } from 'vitest';
import { AllowList, formatIpBlock, parseIpBlock, unwrapMappedIpv4 } from '../../../src/smpp-server/accounts/allow-ip.js';

function canonical(text: string): string {
  const parsed = parseIpBlock(text);
  if (parsed.kind === 'invalid') throw new Error(parsed.reason);
  return formatIpBlock(parsed.block);
}

describe('parseIpBlock', () => {
  it('reads IPv4 and IPv6 blocks, and a bare address as the block of that one address', () => {
    expect(canonical('10.0.0.0/8')).toBe('10.0.0.0/8');
    expect(canonical('198.51.100.7')).toBe('198.51.100.7/32');
    expect(canonical('2001:DB8::/32')).toBe('2001:db8::/32');
    expect(canonical('2001:db8::1')).toBe('2001:db8::1/128');
    expect(canonical('0.0.0.0/0')).toBe('0.0.0.0/0');
    expect(parseIpBlock('10.0.0.0/8')).toEqual({ kind: 'block', block: { family: 'ipv4', address: '10.0.0.0', prefixLength: 8 } });
  });

  it('refuses what is not an address or has a prefix out of range', () => {
    for (const text of ['', 'acme.example', '10.0.0', '256.1.1.1', '10.0.0.0/33', '10.0.0.0/-1', '10.0.0.0/', '10.0.0.0/08', '2001:db8::/129', 'fe80::1%eth0', '10.0.0.0/8/8']) {
      expect(parseIpBlock(text).kind, text).toBe('invalid');
    }
    expect(parseIpBlock('10.0.0.0/33')).toEqual({ kind: 'invalid', reason: "'10.0.0.0/33': the prefix length must be a whole number from 0 to 32" });
    expect(parseIpBlock('example')).toEqual({ kind: 'invalid', reason: "'example' is not an IPv4 or IPv6 address or CIDR block" });
  });
});

describe('AllowList', () => {
  it('allows every address when the list is empty', () => {
    const any = AllowList.of([]);
    expect(any.allows('203.0.113.9')).toBe(true);
    expect(any.allows('2001:db8::9')).toBe(true);
  });

  it('allows an address inside a block and refuses one outside', () => {
    const list = AllowList.of(['198.51.100.0/24', '203.0.113.7/32', '2001:db8:7::/48']);
    expect(list.allows('198.51.100.0')).toBe(true);
    expect(list.allows('198.51.100.255')).toBe(true);
    expect(list.allows('198.51.101.0')).toBe(false);
    expect(list.allows('203.0.113.7')).toBe(true);
    expect(list.allows('203.0.113.8')).toBe(false);
    expect(list.allows('2001:db8:7:ffff::1')).toBe(true);
    expect(list.allows('2001:db8:8::1')).toBe(false);
    expect(list.allows('not an address')).toBe(false);
  });

  it('matches an IPv4-mapped IPv6 peer against the IPv4 blocks', () => {
    expect(unwrapMappedIpv4('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(unwrapMappedIpv4('::FFFF:198.51.100.7')).toBe('198.51.100.7');
    expect(unwrapMappedIpv4('2001:db8::1')).toBe('2001:db8::1');
    const list = AllowList.of(['198.51.100.0/24']);
    expect(list.allows('::ffff:198.51.100.7')).toBe(true);
    expect(list.allows('::ffff:198.51.101.7')).toBe(false);
  });

  it('allows nothing when a stored block cannot be read', () => {
    const list = AllowList.of(['198.51.100.0/24', 'unreadable:garbage']);
    expect(list.allows('198.51.100.7')).toBe(false);
  });
});
