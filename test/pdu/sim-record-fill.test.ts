/**
 * PDUs read from a SIM record (AT+CMGR / AT+CMGL) as some modems hand them up: the TPDU followed
 * by the record's 'FF' fill (TS 31.102 §4.2.25 EF-SMS records are 176 octets). After TP-ST of an
 * SMS-STATUS-REPORT the first 'FF' reads as a TP-PI with reserved bits set, which TS 23.040
 * §9.2.3.27 says to ignore (Android's GSM SmsMessage.parseSmsStatusReport does the same).
 *
 * Base vectors: python-messaging messaging/test/test_sms.py (TestSmsDeliver test_decoding_7bit_pdu
 * and test_decode_sms_confirmation), as in published-examples.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decodePdu, type DecodedDeliver, type DecodedStatusReport } from '../../src/pdu/index.js';

const STATUS_REPORT = '07914306073011F006270B913426565711F7012081111345400120811174054043';
const DELIVER = '07911326040000F0040B911346610089F60000208062917314080CC8F71D14969741F977FD07';

/** Fills a PDU (SMSC field + TPDU) to a 176-octet EF-SMS record: status octet + 175 octets. */
function simRecord(hex: string): string {
  const smscOctets = parseInt(hex.slice(0, 2), 16) + 1;
  const tpduOctets = hex.length / 2 - smscOctets;
  return hex + 'FF'.repeat(175 - tpduOctets);
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe('SMS-STATUS-REPORT with octets after TP-ST (TS 23.040 §9.2.3.27)', () => {
  it('reads a report followed by SIM record fill, ignoring the fill', () => {
    const pdu = decodePdu(simRecord(STATUS_REPORT), { smsc: 'present' }) as DecodedStatusReport;
    expect(pdu.type).toBe('SMS-STATUS-REPORT');
    expect(pdu.messageReference).toBe(0x27);
    expect(pdu.recipient.value).toBe('+43626575117');
    expect(pdu.status).toBe(0x43);
    expect(pdu.userData).toBeNull();
    expect(pdu.ignoredOctets).toBe(175 - 25);
  });

  it.each([['08'], ['10'], ['40'], ['7F']])('ignores a TP-PI %s with a reserved bit set and what follows it', (pi) => {
    const pdu = decodePdu(`${STATUS_REPORT}${pi}0000`, { smsc: 'present' }) as DecodedStatusReport;
    expect(pdu.status).toBe(0x43);
    expect(pdu.protocolId).toBeNull();
    expect(pdu.ignoredOctets).toBe(3);
  });

  it('discards optional fields that cannot be read (TP-UDL longer than the octets left)', () => {
    const pdu = decodePdu(`${STATUS_REPORT}040AE832`, { smsc: 'present' }) as DecodedStatusReport;
    expect(pdu.status).toBe(0x43);
    expect(pdu.userData).toBeNull();
    expect(pdu.ignoredOctets).toBe(4);
  });

  it('reads valid optional fields and ignores the fill after them', () => {
    const pdu = decodePdu(`${STATUS_REPORT}070000` + '02EF35' + 'FFFF', { smsc: 'present' }) as DecodedStatusReport;
    expect(pdu.protocolId).toBe(0);
    expect(pdu.userData?.text).toBe('ok');
    expect(pdu.ignoredOctets).toBe(2);
  });

  it('skips TP-PI extension octets (bit 7) and reads the fields the first one announces', () => {
    const pdu = decodePdu(`${STATUS_REPORT}8100` + '00', { smsc: 'present' }) as DecodedStatusReport;
    expect(pdu.protocolId).toBe(0);
    expect(pdu.ignoredOctets).toBe(0);
  });
});

describe('SMS-DELIVER followed by SIM record fill', () => {
  it('reads the message and ignores the fill', () => {
    const pdu = decodePdu(simRecord(DELIVER), { smsc: 'present' }) as DecodedDeliver;
    expect(pdu.userData.text).toBe('How are you?');
    expect(pdu.originator.value).toBe('+31641600986');
    expect(pdu.ignoredOctets).toBeGreaterThan(0);
  });

  it('still refuses octets after TP-UD that are not fill', () => {
    expect(codeOf(() => decodePdu(`${DELIVER}00FF`, { smsc: 'present' }))).toBe('PDU_TRAILING_OCTETS');
  });
});
