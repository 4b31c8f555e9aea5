import { describe, expect, it } from 'vitest';
import { credentialsBeyondSmpp34 } from '../../../src/transports/smpp/config.js';

describe('credential lengths', () => {
  it('names the credentials longer than SMPP 3.4 allows, counting octets', () => {
    expect(credentialsBeyondSmpp34({ systemId: 'a'.repeat(15), password: 'b'.repeat(8), systemType: 'c'.repeat(12) })).toEqual([]);
    expect(credentialsBeyondSmpp34({ systemId: 'a'.repeat(16), password: 'longer-password', systemType: '' })).toEqual(['systemId', 'password']);
  });
});
