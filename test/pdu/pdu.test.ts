import { describe, expect, it } from 'vitest';
import {
  type DecodedDeliver,
  type DecodedStatusReport,
  type DecodedSubmit,
  decodeCmgsPdu,
  decodePdu,
  encodeSubmitParts,
  encodeSubmitTpdu,
  encodeTextSubmitParts,
  octetsToHex,
  relativeValidityMinutes,
  relativeValidityOctet,
} from '../../src/pdu/index.js';
import { isGatewayError } from '../../src/common/errors.js';
import { packSeptets, encodeGsm7Septets, planMessage } from '../../src/sms/index.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isGatewayError(err) ? err.code : 'NOT_A_GATEWAY_ERROR';
  }
  return undefined;
}

describe('SMS-SUBMIT encoding (TS 23.040 §9.2.2.2)', () => {
  // Source: dreamfabric.com "SMS messages and the PDU format" (Lars Pettersson), SMS-SUBMIT example:
  // 00 (SIM's SMSC) 11 (SUBMIT, VPF relative) 00 (MR) 0B 91 6407281553F8 (+46708251358) 00 00 AA (4 days) 0A E8329BFD4697D9EC37
  it('encodes the classic "hellohello" SMS-SUBMIT byte for byte', () => {
    const [part] = encodeTextSubmitParts('46708251358', 'hellohello', { validityMinutes: 4 * 24 * 60 });
    expect(part?.hex).toBe('0011000B916407281553F80000AA0AE8329BFD4697D9EC37');
    // TS 27.005 §3.5.1: the AT+CMGS length counts the TPDU only, not the 00 SMSC octet.
    expect(part?.tpduOctets).toBe(23);
    expect(part?.hex.length).toBe(2 + 23 * 2);
  });

  it('sets TP-SRR (0x20) when a status report is requested and keeps TP-MR 00 for the modem to fill', () => {
    const [part] = encodeTextSubmitParts('46708251358', 'hellohello', { statusReport: true });
    expect(part?.hex.slice(0, 6)).toBe('003100');
    // Default TP-VP 0xA7: TS 23.040 §9.2.3.12.1, 143 + (24h - 12h) / 30 min = 167 (24 hours).
    expect(part?.hex.slice(22, 28)).toBe('0000A7');
  });

  it('writes a national destination with type-of-address 0xA1 and an F filler for an odd digit count', () => {
    const [part] = encodeTextSubmitParts('0871234567', 'hi', { numberType: 'national' });
    expect(part?.hex.slice(6, 20)).toBe('0AA18017325476');
    const [odd] = encodeTextSubmitParts('123', 'hi', { numberType: 'national' });
    expect(odd?.hex.slice(6, 14)).toBe('03A121F3');
  });

  it('leaves TP-VP out (TP-VPF 00) when validity is null', () => {
    const [part] = encodeTextSubmitParts('46708251358', 'hellohello', { validityMinutes: null });
    expect(part?.hex).toBe('0001000B916407281553F800000AE8329BFD4697D9EC37');
  });

  it('splits a 200-character GSM-7 text into two parts with UDH 05 00 03 ref 02 seq and one fill bit', () => {
    const parts = encodeTextSubmitParts('353871234567', 'x'.repeat(200), { statusReport: true, reference: 0x42 });
    expect(parts).toHaveLength(2);
    const first = parts[0] as (typeof parts)[number];
    // 0x71: TP-UDHI | TP-SRR | TP-VPF relative | SMS-SUBMIT
    expect(first.hex.slice(0, 4)).toBe('0071');
    // UDL 0xA0 = 160 septets: 7 septets of UDH (6 octets + 1 fill bit) + 153 text septets.
    expect(first.hex.slice(28, 42)).toBe('A0050003420201');
    // 'x' = 0x78 shifted past the single fill bit: 0xF0 (TS 23.040 §9.2.3.24, fill bits).
    expect(first.hex.slice(42, 44)).toBe('F0');
    expect(first.tpduOctets).toBe(154);
    expect(parts[1]?.hex.slice(28, 42)).toBe('36050003420202');
  });

  it('encodes UCS-2 with DCS 0x08 and a UDL in octets', () => {
    const [part] = encodeTextSubmitParts('46708251358', 'Привет');
    expect(part?.hex).toBe('0011000B916407281553F80008A70C041F04400438043204350442');
  });

  it('uses a 16-bit reference IE (06 08 04 refHi refLo total seq) when asked', () => {
    const plan = planMessage('y'.repeat(200), { concatReferenceBits: 16 });
    const parts = encodeSubmitParts({ destination: '353871234567', encoding: plan.encoding, segments: plan.segments, reference: 0x1234, referenceBits: 16 });
    const decoded = decodePdu(parts[0]?.hex ?? '') as DecodedSubmit;
    expect(decoded.userData.concat).toEqual({ reference: 0x1234, referenceBits: 16, total: 2, sequence: 1 });
    expect(decoded.userData.udh[0]).toEqual({ iei: 0x08, data: '12340201' });
  });

  it('round-trips GSM-7 extension characters, UCS-2 emoji and multipart texts through decodePdu', () => {
    for (const text of ['Price: 5€ [sale] {now} ~ok~ \\ |', 'Hi 👋 there', 'é'.repeat(170), `${'€'.repeat(80)}`, 'A'.repeat(459)]) {
      const plan = planMessage(text);
      const parts = encodeTextSubmitParts('353861112222', text, { reference: 7 });
      expect(parts).toHaveLength(plan.parts);
      const decoded = parts.map((p) => decodeCmgsPdu(p.hex, p.tpduOctets));
      expect(decoded.map((d) => d.userData.text).join('')).toBe(plan.text);
      decoded.forEach((d, i) => {
        expect(d.destination.value).toBe('+353861112222');
        expect(d.userData.concat).toEqual(plan.parts > 1 ? { reference: 7, referenceBits: 8, total: plan.parts, sequence: i + 1 } : null);
      });
    }
  });

  it('decodes GSM-7 text sent with the Turkish national single shift table (UDH 03 24 01 01, TS 23.040 §9.2.3.24.15)', () => {
    const text = 'Günaydın: ğ ş İ';
    const septets = encodeGsm7Septets(text, { single: 'turkish' });
    const udh = Uint8Array.of(0x03, 0x24, 0x01, 0x01);
    // 4 UDH octets = 32 bits -> 5 septets, so 3 fill bits before the text (TS 23.040 §9.2.3.24).
    const userData = Uint8Array.from([...udh, ...packSeptets(septets, 3)]);
    const pdu = encodeSubmitTpdu({
      destination: '905321234567', numberType: 'international', statusReport: false, rejectDuplicates: false, validityMinutes: null,
      protocolId: 0, dcs: 0, userData, udl: 5 + septets.length, hasUserDataHeader: true,
    });
    const decoded = decodeCmgsPdu(pdu.hex, pdu.tpduOctets);
    expect(decoded.userData.udh).toEqual([{ iei: 0x24, data: '01' }]);
    expect(decoded.userData.text).toBe(text);
  });

  it('refuses a shift element naming a national language it has no table for', () => {
    const pdu = encodeSubmitTpdu({
      destination: '905321234567', numberType: 'international', statusReport: false, rejectDuplicates: false, validityMinutes: null,
      protocolId: 0, dcs: 0, userData: Uint8Array.of(0x03, 0x24, 0x01, 0x0d, 0x00), udl: 5, hasUserDataHeader: true,
    });
    expect(codeOf(() => decodeCmgsPdu(pdu.hex, pdu.tpduOctets))).toBe('PDU_UNKNOWN_NATIONAL_LANGUAGE');
  });

  it('maps relative validity periods on the TS 23.040 §9.2.3.12.1 table', () => {
    expect(relativeValidityOctet(5)).toBe(0);
    expect(relativeValidityOctet(12 * 60)).toBe(143);
    expect(relativeValidityOctet(24 * 60)).toBe(167);
    expect(relativeValidityOctet(2 * 24 * 60)).toBe(168);
    expect(relativeValidityOctet(30 * 24 * 60)).toBe(196);
    expect(relativeValidityOctet(5 * 7 * 24 * 60)).toBe(197);
    expect(relativeValidityOctet(100 * 7 * 24 * 60)).toBe(255);
    expect(relativeValidityMinutes(0xaa)).toBe(4 * 24 * 60);
    expect(relativeValidityMinutes(255)).toBe(63 * 7 * 24 * 60);
    expect(codeOf(() => relativeValidityOctet(1))).toBe('PDU_BAD_VALIDITY');
  });

  it('refuses a destination that is not 1 to 20 digits', () => {
    expect(codeOf(() => encodeTextSubmitParts('+353', 'x'))).toBe('PDU_BAD_ADDRESS');
    expect(codeOf(() => encodeTextSubmitParts('', 'x'))).toBe('PDU_BAD_ADDRESS');
  });
});

describe('SMS-DELIVER decoding (TS 23.040 §9.2.2.1)', () => {
  // Source: dreamfabric.com "SMS messages and the PDU format", SMS-DELIVER example: SMSC +27381000015,
  // sender 27838890001 (type 0xC8), SCTS 99 30 92 51 61 95 80 = 29/03/99 15:16:59, zone +8 quarters, "hellohello".
  it('decodes the dreamfabric SMS-DELIVER example', () => {
    const pdu = decodePdu('07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37') as DecodedDeliver;
    expect(pdu.type).toBe('SMS-DELIVER');
    expect(pdu.smsc?.value).toBe('+27381000015');
    expect(pdu.originator).toEqual({ value: '27838890001', digits: '27838890001', typeOfNumber: 4, numberingPlan: 8 });
    expect(pdu.serviceCentreTimestamp.local).toBe('1999-03-29T15:16:59+02:00');
    expect(pdu.serviceCentreTimestamp.instant).toBe('1999-03-29T13:16:59.000Z');
    expect(pdu.userData.text).toBe('hellohello');
    expect(pdu.moreMessagesToSend).toBe(false);
  });

  it('decodes an alphanumeric originator (TON 5, GSM-7 packed) and a negative time zone', () => {
    const name = packSeptets(encodeGsm7Septets('InfoSMS'));
    // Length = useful semi-octets: 7 septets = 49 bits -> 13 semi-octets (0x0D) in 7 octets.
    const tpdu = `040DD0${octetsToHex(name)}0000` + '52112112000049' + '02' + octetsToHex(packSeptets(encodeGsm7Septets('ok')));
    const pdu = decodePdu(`00${tpdu}`) as DecodedDeliver;
    expect(pdu.originator.value).toBe('InfoSMS');
    expect(pdu.originator.typeOfNumber).toBe(5);
    // Zone octet 0x49: bit 3 set = negative; semi-octets 1,4 -> 14 quarters = 3 h 30.
    expect(pdu.serviceCentreTimestamp.local).toBe('2025-11-12T21:00:00-03:30');
    expect(pdu.userData.text).toBe('ok');
  });

  it('decodes a UCS-2 DELIVER with a 16-bit concatenation header', () => {
    // First octet 0x44: UDHI + TP-MMS; DCS 08; UDL 7 (UDH) + 4 (two UCS-2 characters).
    const pdu = decodePdu('0791538317000000440C915383173254760008521121120000400B0608045678030204420435') as DecodedDeliver;
    expect(pdu.userData.concat).toEqual({ reference: 0x5678, referenceBits: 16, total: 3, sequence: 2 });
    expect(pdu.userData.text).toBe('те');
    expect(pdu.originator.value).toBe('+353871234567');
  });
});

describe('SMS-STATUS-REPORT decoding (TS 23.040 §9.2.2.3)', () => {
  // Assembled field by field from TS 23.040 §9.2.2.3: SMSC 07 91 1326060032F0 (+31626000230), first octet 06
  // (STATUS-REPORT, TP-MMS), TP-MR D9, TP-RA 0B 91 1326880736F4 (+31628870634), TP-SCTS 2011-01-11 17:59:15 +01:00,
  // TP-DT 2011-01-11 17:59:17 +01:00, TP-ST 00 (received by the SME).
  it('decodes TP-MR, recipient, both time stamps and TP-ST', () => {
    const pdu = decodePdu('07911326060032F006D90B911326880736F4111011719551401110117195714000') as DecodedStatusReport;
    expect(pdu.type).toBe('SMS-STATUS-REPORT');
    expect(pdu.messageReference).toBe(217);
    expect(pdu.recipient.value).toBe('+31628870634');
    expect(pdu.serviceCentreTimestamp.local).toBe('2011-01-11T17:59:15+01:00');
    expect(pdu.dischargeTime.instant).toBe('2011-01-11T16:59:17.000Z');
    expect(pdu.status).toBe(0x00);
    expect(pdu.userData).toBeNull();
  });

  it('reads the optional TP-PI, TP-PID, TP-DCS and TP-UD after TP-ST', () => {
    const report = '0006050B911326880736F41110117195514011101171957140' + '46' + '07' + '00' + '00' + '02' + 'EF35';
    const pdu = decodePdu(report, { smsc: 'present' }) as DecodedStatusReport;
    expect(pdu.status).toBe(0x46);
    expect(pdu.protocolId).toBe(0);
    expect(pdu.userData?.text).toBe('ok');
  });
});

describe('malformed PDUs are coded failures, never shortened fields', () => {
  it.each([
    ['odd hex', '0011000', 'PDU_BAD_HEX'],
    ['not hex', '00ZZ', 'PDU_BAD_HEX'],
    ['cut inside the destination', '0011000B916407', 'PDU_TRUNCATED'],
    ['UDL longer than the data', '0011000B916407281553F80000AA0BE8329BFD4697D9EC37', 'PDU_BAD_USER_DATA'],
    ['data longer than the UDL', '0011000B916407281553F80000AA09E8329BFD4697D9EC37', 'PDU_BAD_USER_DATA'],
    ['reserved TP-MTI', '0003', 'PDU_WRONG_TYPE'],
  ])('%s', (_name, hex, code) => {
    expect(codeOf(() => decodePdu(hex, { smsc: 'present' }))).toBe(code);
  });

  it('checks the AT+CMGS length against the TPDU after the SMSC field', () => {
    expect(codeOf(() => decodeCmgsPdu('0011000B916407281553F80000AA0AE8329BFD4697D9EC37', 24))).toBe('PDU_LENGTH_MISMATCH');
    expect(decodeCmgsPdu('0011000B916407281553F80000AA0AE8329BFD4697D9EC37', 23).userData.text).toBe('hellohello');
  });
});
