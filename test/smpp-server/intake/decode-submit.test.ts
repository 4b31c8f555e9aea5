/**
 * submit_sm user data as text and the customer's cut: the data codings 0 (GSM 03.38 unpacked, one
 * septet per octet), 3 (Latin-1) and 8 (UCS-2), UDH concatenation with 8- and 16-bit references
 * (3GPP TS 23.040 §9.2.3.24.1, .8), SAR TLVs and message_payload (SMPP 3.4 §5.3.2), and the
 * refusals: an unknown data_coding, both short_message and message_payload, a cut part over one SMS.
 */
import { describe, expect, it } from 'vitest';
import { SERVER_STATUS, type SubmitSmFields } from '../../../src/smpp-server/contracts.js';
import { decodeSubmit } from '../../../src/smpp-server/intake/decode-submit.js';

function fields(overrides: Partial<SubmitSmFields>): SubmitSmFields {
  return {
    serviceType: '', sourceAddrTon: 5, sourceAddrNpi: 0, sourceAddr: 'Acme', destAddrTon: 1, destAddrNpi: 1, destinationAddr: '353871234567',
    esmClass: 0, protocolId: 0, priorityFlag: 0, scheduleDeliveryTime: '', validityPeriod: '', registeredDelivery: 1, dataCoding: 0,
    shortMessage: Buffer.alloc(0), ...overrides,
  };
}

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

describe('decodeSubmit data codings', () => {
  it('reads data_coding 0 as GSM 03.38 septets, one per octet, the escape reaching the extension table', () => {
    // "@£$ Hello €[" : 00 01 02 20 48 65 6C 6C 6F 20 1B65 1B3C (TS 23.038 §6.2.1, §6.2.1.1)
    const decoded = decodeSubmit(fields({ shortMessage: hex('00 01 02 20 48 65 6C 6C 6F 20 1B 65 1B 3C') }));
    expect(decoded).toEqual({
      kind: 'decoded', text: '@£$ Hello €[',
      cut: { dataCoding: 0, concat: null, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 },
    });
  });

  it('reads data_coding 3 as Latin-1 and 8 as UCS-2 big-endian', () => {
    expect(decodeSubmit(fields({ dataCoding: 3, shortMessage: hex('43 61 66 E9 20 A3 35') }))).toMatchObject({ kind: 'decoded', text: 'Café £5', cut: { dataCoding: 3 } });
    // "Привет" and an emoji as a surrogate pair (U+1F600 = D83D DE00)
    expect(decodeSubmit(fields({ dataCoding: 8, shortMessage: hex('041F 0440 0438 0432 0435 0442 D83D DE00') }))).toMatchObject({ kind: 'decoded', text: 'Привет😀', cut: { dataCoding: 8 } });
  });

  it('refuses UCS-2 of an odd length with ESME_RINVMSGLEN and any other data_coding with ESME_RINVPARAM', () => {
    expect(decodeSubmit(fields({ dataCoding: 8, shortMessage: hex('00 48 00') }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidMessageLength });
    for (const dataCoding of [1, 2, 4, 0xf0, 0x18]) {
      expect(decodeSubmit(fields({ dataCoding, shortMessage: hex('48 69') }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidParameter });
    }
    // An octet above 0x7F is no unpacked septet.
    expect(decodeSubmit(fields({ shortMessage: hex('48 E9') }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidParameter });
  });
});

describe('decodeSubmit concatenation', () => {
  it('takes an 8-bit reference UDH (05 00 03 ref total seq) as udh8 and keeps it out of the text', () => {
    const decoded = decodeSubmit(fields({ esmClass: 0x40, shortMessage: Buffer.concat([hex('05 00 03 A7 02 01'), Buffer.from('Part one')]) }));
    expect(decoded).toMatchObject({ kind: 'decoded', text: 'Part one', cut: { concat: { scheme: 'udh8', reference: 0xa7, total: 2, sequence: 1 } } });
  });

  it('takes a 16-bit reference UDH (06 08 04 refHi refLo total seq) as udh16', () => {
    const decoded = decodeSubmit(fields({ dataCoding: 8, esmClass: 0x40, shortMessage: Buffer.concat([hex('06 08 04 12 34 03 02'), hex('0048 0069')]) }));
    expect(decoded).toMatchObject({ kind: 'decoded', text: 'Hi', cut: { dataCoding: 8, concat: { scheme: 'udh16', reference: 0x1234, total: 3, sequence: 2 } } });
  });

  it('skips other information elements, alone or beside a concatenation', () => {
    // TS 23.040 §9.2.3.24.4: application port addressing, 16-bit (IEI 05), WAP push ports 2948 / 9200.
    const portOnly = decodeSubmit(fields({ dataCoding: 3, esmClass: 0x40, shortMessage: Buffer.concat([hex('06 05 04 0B 84 23 F0'), Buffer.from('data')]) }));
    expect(portOnly).toMatchObject({ kind: 'decoded', text: 'data', cut: { concat: null } });
    const both = decodeSubmit(fields({ esmClass: 0x40, shortMessage: Buffer.concat([hex('0B 05 04 0B 84 23 F0 00 03 01 02 02'), Buffer.from('two')]) }));
    expect(both).toMatchObject({ kind: 'decoded', text: 'two', cut: { concat: { scheme: 'udh8', reference: 1, total: 2, sequence: 2 } } });
  });

  it('takes SAR TLVs as scheme sar', () => {
    const decoded = decodeSubmit(fields({ shortMessage: Buffer.from('second'), sar: { reference: 300, total: 2, sequence: 2 } }));
    expect(decoded).toMatchObject({ kind: 'decoded', text: 'second', cut: { concat: { scheme: 'sar', reference: 300, total: 2, sequence: 2 } } });
  });

  it('refuses a malformed UDH or concatenation with ESME_RINVPARAM', () => {
    const cases = [
      hex('07 00 03 01 02 01'), // UDHL past the data
      hex('05 00 03 01 02 00 41'), // sequence 0
      hex('05 00 03 01 02 03 41'), // sequence past the total
      hex('05 00 02 01 02 41'), // concatenation IE of the wrong length
    ];
    for (const shortMessage of cases) expect(decodeSubmit(fields({ esmClass: 0x40, shortMessage }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidParameter });
    // A shift element naming a national language smsgate has no table for: the text cannot be read.
    expect(decodeSubmit(fields({ esmClass: 0x40, shortMessage: hex('03 25 01 7F 48') }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidParameter });
  });

  it('reads data_coding 0 with the national language table a shift element in the UDH names (TS 23.040 §9.2.3.24.15)', () => {
    // Turkish single shift (IE 0x24, language 1): ESC 0x63 is 'ç', where the default extension table has none ('c').
    const decoded = decodeSubmit(fields({ esmClass: 0x40, shortMessage: hex('03 24 01 01 48 1B 63') }));
    expect(decoded).toEqual({ kind: 'decoded', text: 'Hç', cut: { dataCoding: 0, concat: null, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 } });
    // A cut part goes upstream in the default alphabet with only its concatenation header: 'ç' has no
    // code there, so the engine could not send it as cut, and the intake refuses it by the same rule.
    expect(decodeSubmit(fields({ esmClass: 0x40, shortMessage: hex('08 00 03 01 02 01 24 01 01 48 1B 63') }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidParameter });
  });
});

describe('decodeSubmit message_payload and lengths', () => {
  it('takes a message_payload with an empty short_message as one whole long message (no concatenation: the engine splits it)', () => {
    const long = 'L'.repeat(400);
    const decoded = decodeSubmit(fields({ messagePayload: Buffer.from(long) }));
    expect(decoded).toEqual({ kind: 'decoded', text: long, cut: { dataCoding: 0, concat: null, registeredDelivery: 1, sourceAddrTon: 5, sourceAddrNpi: 0 } });
  });

  it('refuses short_message and message_payload both, and a submit with neither, with ESME_RINVMSGLEN', () => {
    expect(decodeSubmit(fields({ shortMessage: Buffer.from('a'), messagePayload: Buffer.from('b') }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidMessageLength });
    expect(decodeSubmit(fields({}))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidMessageLength });
  });

  it('takes a cut part up to one SMS and refuses one octet or septet more', () => {
    const udh8 = hex('05 00 03 01 02 01');
    const udh16 = hex('06 08 04 01 01 02 01');
    const accepts = (f: Partial<SubmitSmFields>): boolean => decodeSubmit(fields(f)).kind === 'decoded';
    // GSM 03.38: 153 septets after an 8-bit reference UDH, 152 after a 16-bit one (TS 23.040 §9.2.3.16, fill bits).
    expect(accepts({ esmClass: 0x40, shortMessage: Buffer.concat([udh8, Buffer.from('A'.repeat(153))]) })).toBe(true);
    expect(decodeSubmit(fields({ esmClass: 0x40, shortMessage: Buffer.concat([udh8, Buffer.from('A'.repeat(154))]) }))).toEqual({ kind: 'refused', status: SERVER_STATUS.invalidMessageLength });
    expect(accepts({ esmClass: 0x40, shortMessage: Buffer.concat([udh16, Buffer.from('A'.repeat(152))]) })).toBe(true);
    expect(accepts({ esmClass: 0x40, shortMessage: Buffer.concat([udh16, Buffer.from('A'.repeat(153))]) })).toBe(false);
    // Latin-1 and UCS-2: 140 octets of user data, the UDH included.
    expect(accepts({ dataCoding: 3, esmClass: 0x40, shortMessage: Buffer.concat([udh8, Buffer.alloc(134, 0x41)]) })).toBe(true);
    expect(accepts({ dataCoding: 3, esmClass: 0x40, shortMessage: Buffer.concat([udh8, Buffer.alloc(135, 0x41)]) })).toBe(false);
    expect(accepts({ dataCoding: 8, esmClass: 0x40, shortMessage: Buffer.concat([udh8, Buffer.alloc(134, 0x41)]) })).toBe(true);
    expect(accepts({ dataCoding: 8, esmClass: 0x40, shortMessage: Buffer.concat([udh8, Buffer.alloc(136, 0x41)]) })).toBe(false);
    // SAR: the UDH the part will carry upstream counts (8-bit reference up to 255, 16-bit beyond).
    expect(accepts({ shortMessage: Buffer.from('A'.repeat(153)), sar: { reference: 7, total: 2, sequence: 1 } })).toBe(true);
    expect(accepts({ shortMessage: Buffer.from('A'.repeat(154)), sar: { reference: 7, total: 2, sequence: 1 } })).toBe(false);
    expect(accepts({ shortMessage: Buffer.from('A'.repeat(153)), sar: { reference: 700, total: 2, sequence: 1 } })).toBe(false);
    // A cut part sent in message_payload is held to the same.
    expect(accepts({ esmClass: 0x40, messagePayload: Buffer.concat([udh8, Buffer.from('A'.repeat(154))]) })).toBe(false);
    // No concatenation: a whole message, whatever its length.
    expect(accepts({ shortMessage: Buffer.from('A'.repeat(254)) })).toBe(true);
  });
});
