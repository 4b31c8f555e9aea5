/**
 * PDUs published by other implementations' test suites, checked byte for byte (encoding) or
 * field by field (decoding). Source of every vector: python-messaging (github.com/pmarti/python-messaging),
 * messaging/test/test_sms.py, whose authors checked them with pduspy.exe, rednaxela.net/pdu.php and umts-tools
 * as noted per case below.
 */
import { describe, expect, it } from 'vitest';
import { type DecodedDeliver, type DecodedStatusReport, decodePdu, encodeSubmitParts, encodeTextSubmitParts } from '../../src/pdu/index.js';
import { planMessage } from '../../src/sms/index.js';

const FOUR_DAYS_MINUTES = 4 * 24 * 60;

describe('SMS-SUBMIT vectors from python-messaging test_sms.py (TestSmsSubmit)', () => {
  it('test_encoding_validity: "hola" without TP-VP and with a relative 4-day TP-VP', () => {
    expect(encodeTextSubmitParts('34616585119', 'hola', { validityMinutes: null })[0]?.hex).toBe('0001000B914316565811F9000004E8373B0C');
    const relative = encodeTextSubmitParts('34616585119', 'hola', { validityMinutes: FOUR_DAYS_MINUTES })[0];
    expect(relative?.hex).toBe('0011000B914316565811F90000AA04E8373B0C');
    expect(relative?.tpduOctets).toBe(18);
  });

  it('test_encoding_request_status: TP-SRR set, no TP-VP (checked there with pduspy.exe and rednaxela.net/pdu.php)', () => {
    expect(encodeTextSubmitParts('34654123456', 'hey yo', { validityMinutes: null, statusReport: true })[0]?.hex).toBe('0021000B914356143254F6000006E8721E947F03');
  });

  it('test_encoding_message_with_latin1_chars: GSM-7 letters outside ASCII (checked there with pduspy.exe)', () => {
    expect(encodeTextSubmitParts('34654123456', 'Hölä', { validityMinutes: FOUR_DAYS_MINUTES })[0]?.hex).toBe('0011000B914356143254F60000AA04483E7B0F');
    expect(encodeTextSubmitParts('34654123456', 'BÄRÇA äñ@', { validityMinutes: null })[0]?.hex).toBe('0001000B914356143254F6000009C2AD341104EDFB00');
  });

  it('test_encoding_ucs2_message: UCS-2 to a number of unknown type (0x81)', () => {
    expect(encodeTextSubmitParts('655345678', 'Русский', { validityMinutes: FOUR_DAYS_MINUTES, numberType: 'unknown' })[0]?.hex).toBe(
      '001100098156355476F80008AA0E0420044304410441043A04380439',
    );
  });

  it('test_encoding_multipart_7bit: three concatenated parts, reference 136 (encoded there with umts-tools)', () => {
    const text =
      "Or walk with Kings - nor lose the common touch, if neither foes nor loving friends can hurt you, If all men count with you, but none too much; If you can fill the unforgiving minute With sixty seconds' worth of distance run, Yours is the Earth and everything thats in it, And - which is more - you will be a Man, my son";
    const plan = planMessage(text);
    const parts = encodeSubmitParts(
      { destination: '655345678', encoding: plan.encoding, segments: plan.segments, reference: 136 },
      { validityMinutes: FOUR_DAYS_MINUTES, numberType: 'unknown' },
    );
    expect(parts.map((p) => p.hex)).toEqual([
      '005100098156355476F80000AAA00500038803019E72D03DCC5E83EE693A1AB44CBBCF73500BE47ECB41ECF7BC0CA2A3CBA0F1BBDD7EBB41F4777D8C6681D26690BB9CA6A3CB7290F95D9E83DC6F3988FDB6A7DD6790599E2EBBC973D038EC06A1EB723A28FFAEB340493328CC6683DA653768FCAEBBE9A07B9A8E06E5DF7516485CA783DC6F7719447FBF41EDFA18BD0325CDA0FCBB0E1A87DD',
      '005100098156355476F80000AAA005000388030240E6349B0DA2A3CBA0BADBFC969FD3F6B4FB0C6AA7DD757A19744DD3D1A0791A4FCF83E6E5F1DB4D9E9F40F7B79C8E06BDCD20727A4E0FBBC76590BCEE6681B2EFBA7C0E4ACF41747419540CCBE96850D84D0695ED65799E8E4EBBCF203A3A4C9F83D26E509ACE0205DD64500B7447A7C768507A0E6ABFE565500B947FD741F7349B0D129741',
      '005100098156355476F80000AA14050003880303C2A066D8CD02B5F3A0F9DB0D',
    ]);
  });
});

describe('SMS-DELIVER and SMS-STATUS-REPORT vectors from python-messaging test_sms.py (TestSmsDeliver)', () => {
  it('test_decoding_7bit_pdu: "How are you?" from +31641600986 via +31624000000, 2002-08-26 19:37:41', () => {
    const pdu = decodePdu('07911326040000F0040B911346610089F60000208062917314080CC8F71D14969741F977FD07') as DecodedDeliver;
    expect(pdu.userData.text).toBe('How are you?');
    expect(pdu.smsc?.value).toBe('+31624000000');
    expect(pdu.originator.value).toBe('+31641600986');
    expect(pdu.protocolId).toBe(0);
    expect(pdu.serviceCentreTimestamp.local.slice(0, 19)).toBe('2002-08-26T19:37:41');
  });

  it('test_decoding_ucs2_pdu: 中兴通讯', () => {
    const pdu = decodePdu('07914306073011F0040B914316709807F2000880604290224080084E2D5174901A8BAF') as DecodedDeliver;
    expect(pdu.userData.text).toBe('中兴通讯');
    expect(pdu.smsc?.value).toBe('+34607003110');
    expect(pdu.originator.value).toBe('+34610789702');
  });

  it('test_decoding_datetime_gmtplusone: zone +4 quarters gives 16:41:32 UTC', () => {
    const pdu = decodePdu('0791447758100650040C914497716247010000909010711423400A2050EC468B81C4733A') as DecodedDeliver;
    expect(pdu.userData.text).toBe('  1741 bst');
    expect(pdu.originator.value).toBe('+447917267410');
    expect(pdu.serviceCentreTimestamp.instant).toBe('2009-09-01T16:41:32.000Z');
    expect(pdu.serviceCentreTimestamp.offsetMinutes).toBe(60);
  });

  it('test_decoding_datetime_gmtminusthree: a negative zone gives 18:10:11 UTC', () => {
    const pdu = decodePdu(
      '0791553001000001040491578800000190115101112979CF340B342F9FEBE536E83D0791C3E4F71C440E83E6F53068FE66A7C7697A781C7EBB4050F99BFE1EBFD96F1D48068BC16030182E66ABD560B41988FC06D1D3F03768FA66A7C7697A781C7E83CCEF34282C2ECBE96F50B90D8AC55EB0DC4B068BC140B1994E16D3D1622E',
    ) as DecodedDeliver;
    expect(pdu.serviceCentreTimestamp.instant).toBe('2010-09-11T18:10:11.000Z');
    expect(pdu.serviceCentreTimestamp.offsetMinutes).toBe(-180);
  });

  it('test_decoding_number_alphanumeric: alphanumeric senders of odd and even length', () => {
    const fonic = decodePdu(
      '07919471060040340409D0C6A733390400009060920173018093CC74595C96838C4F6772085AD6DDE4320B444E9741D4B03C6D7EC3E9E9B71B9474D3CB727799DEA286CFE5B9991DA6CBC3F432E85E9793CBA0F09A9EB6A7CB72BA0B9474D3CB727799DE72D6E9FABAFB0CBAA7E56490BA4CD7D34170F91BE4ACD3F575F7794E0F9F4161F1B92C2F8FD1EE32DD054AA2E520E3D3991C82A8E5701B',
    ) as DecodedDeliver;
    expect(fonic.originator.value).toBe('FONIC');
    expect(fonic.smsc?.value).toBe('+491760000443');
    expect(fonic.userData.text).toBe(
      'Lieber FONIC Kunde, die Tarifoption Internet-Tagesflatrate wurde aktiviert. Internet-Nutzung wird jetzt pro Nutzungstag abgerechnet. Ihr FONIC Team',
    );
    const tim = decodePdu('07919333852804000412D0F7FBDD454FB75D693A0000903002801153402BCD301E9F0605D9E971191483C140412A35690D52832063D2F9040599A058EE05A3BD6430580E') as DecodedDeliver;
    expect(tim.originator.value).toBe('www.tim.it');
    expect(tim.userData.text).toBe('Maxxi Alice 100 ATTIVATA FINO AL 19/04/2009');
  });

  it('test_decode_sms_confirmation: an SMS-STATUS-REPORT with TP-MR 0x27 and both time stamps', () => {
    const pdu = decodePdu('07914306073011F006270B913426565711F7012081111345400120811174054043') as DecodedStatusReport;
    expect(pdu.type).toBe('SMS-STATUS-REPORT');
    expect(pdu.smsc?.value).toBe('+34607003110');
    expect(pdu.messageReference).toBe(0x27);
    expect(pdu.recipient.value).toBe('+43626575117');
    expect(pdu.serviceCentreTimestamp.local).toBe('2010-02-18T11:31:54+01:00');
    expect(pdu.dischargeTime.local).toBe('2010-02-18T11:47:50+01:00');
    expect(pdu.status).toBe(0x43);
  });
});
