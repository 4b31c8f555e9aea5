/** SMPP 3.4 §5.2.19 data_coding of an MO message to how its octets are read (src/transports/smpp/mo-user-data.ts). */
import { describe, expect, it } from 'vitest';
import { moCoding } from '../../src/transports/smpp/mo-user-data.js';

describe('moCoding', () => {
  it.each([
    [0x00, 'gsm7'], [0x08, 'ucs2'], [0x02, 'binary'], [0x04, 'binary'],
    [0xf0, 'gsm7'], [0xf1, 'gsm7'], [0xf4, 'binary'], [0xf6, 'binary'],
    [0x01, 'other'], [0x03, 'other'], [0x06, 'other'],
  ] as const)('reads data_coding %i as %s', (dataCoding, coding) => {
    expect(moCoding(dataCoding)).toBe(coding);
  });
});
