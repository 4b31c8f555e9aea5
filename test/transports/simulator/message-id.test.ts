import { describe, expect, it } from 'vitest';
import { decodeSimulatorMessageId, encodeSimulatorMessageId } from '../../../src/transports/simulator/message-id.js';

describe('simulator message ids', () => {
  it.each([
    { instance: '0a1b2c3d', sequence: 0, submittedAtMs: 1_763_740_000_000, status: 'DELIVRD' },
    { instance: 'ffffffff', sequence: 123_456_789, submittedAtMs: 1, status: 'UNDELIV' },
    // A status whose base64url holds '-' (the field separator), and a non-ASCII one.
    { instance: '00000000', sequence: 7, submittedAtMs: 1_763_740_000_123, status: 'A  >?~' },
    { instance: '12345678', sequence: 42, submittedAtMs: 1_763_740_000_456, status: 'ÉCHEC' },
  ])('round-trips %o', (id) => {
    const encoded = encodeSimulatorMessageId(id);
    expect(encoded.length).toBeLessThanOrEqual(65); // SMPP 3.4 §5.2.23: message_id is at most 65 octets
    expect(decodeSimulatorMessageId(encoded)).toEqual(id);
  });

  it('writes the documented layout: instance, sequence and submit time in base 36, status in base64url', () => {
    expect(encodeSimulatorMessageId({ instance: '0a1b2c3d', sequence: 35, submittedAtMs: 36, status: 'DELIVRD' })).toBe('0a1b2c3d-z-10-REVMSVZSRA');
  });

  it.each([
    '',
    '0a1b2c3d00000001', // the earlier format: no fields
    '0a1b2c3d-1-2', // no status
    'zzzzzzzz-1-2-REVMSVZSRA', // instance not hex
    '0a1b2c3d-1-2-', // empty status
    '0a1b2c3d-1-2-RE=', // not base64url
    '0a1b2c3d-1-2-REVMSVZSRB', // not the canonical encoding of any text
    '0A1B2C3D-1-2-REVMSVZSRA', // upper-case instance
  ])('does not decode %j, an id the simulator did not make', (id) => {
    expect(decodeSimulatorMessageId(id)).toBeUndefined();
  });
});
