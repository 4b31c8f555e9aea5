import { describe, expect, it } from 'vitest';
import { normalizeMessageId } from '../../src/receipts/index.js';

describe('normalizeMessageId', () => {
  it('ignores case and leading zeros', () => {
    expect(normalizeMessageId('00abCD12')).toBe('ABCD12');
    expect(normalizeMessageId('000')).toBe('0');
    expect(normalizeMessageId(' 42 ')).toBe('42');
  });

  it('converts a hex receipt id to the decimal form of submit_sm_resp', () => {
    expect(normalizeMessageId('1F', 'hex-to-dec')).toBe(normalizeMessageId('31'));
    expect(normalizeMessageId('000000ff', 'hex-to-dec')).toBe('255');
  });

  it('converts a decimal receipt id to the hex form of submit_sm_resp', () => {
    expect(normalizeMessageId('255', 'dec-to-hex')).toBe(normalizeMessageId('00ff'));
  });

  it('converts ids beyond 2^53 exactly', () => {
    expect(normalizeMessageId('FFFFFFFFFFFFFFFFFF', 'hex-to-dec')).toBe('4722366482869645213695');
    expect(normalizeMessageId('4722366482869645213695', 'dec-to-hex')).toBe('FFFFFFFFFFFFFFFFFF');
  });

  it('leaves an id that cannot be converted as it is (canonical form)', () => {
    expect(normalizeMessageId('abc-123', 'hex-to-dec')).toBe('ABC-123');
    expect(normalizeMessageId('1f', 'dec-to-hex')).toBe('1F');
  });
});
