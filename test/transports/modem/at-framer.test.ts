import { describe, expect, it } from 'vitest';
import { AtFramer, type AtFrame } from '../../../src/transports/modem/at-framer.js';
import { classifyLine, parseFinal, splitArgs } from '../../../src/transports/modem/at-line.js';
import { isTemporaryCmsError } from '../../../src/transports/modem/cms-errors.js';

function whole(input: string): AtFrame[] {
  return new AtFramer().push(Buffer.from(input, 'latin1'));
}

function byteByByte(input: string): AtFrame[] {
  const framer = new AtFramer();
  const frames: AtFrame[] = [];
  for (const byte of Buffer.from(input, 'latin1')) frames.push(...framer.push(Uint8Array.of(byte)));
  return frames;
}

const STATUS_REPORT_PDU = '07911326060032F006D90B911326880736F4111011719551401110117195714000';

const FIXTURES: Record<string, { input: string; frames: AtFrame[] }> = {
  'a response with OK': {
    input: '\r\n+CSQ: 21,99\r\n\r\nOK\r\n',
    frames: [{ kind: 'line', text: '+CSQ: 21,99' }, { kind: 'line', text: 'OK' }],
  },
  'the AT+CMGS prompt, which has no line end (TS 27.005 §3.5.1)': {
    input: '\r\n> ',
    frames: [{ kind: 'prompt' }],
  },
  'the prompt, then +CMGS and OK': {
    input: '\r\n> \r\n+CMGS: 17\r\n\r\nOK\r\n',
    frames: [{ kind: 'prompt' }, { kind: 'line', text: '+CMGS: 17' }, { kind: 'line', text: 'OK' }],
  },
  '+CDS header paired with its PDU line (TS 27.005 §3.4.1)': {
    input: `\r\n+CDS: 25\r\n${STATUS_REPORT_PDU}\r\n`,
    frames: [{ kind: 'pdu', header: '+CDS: 25', hex: STATUS_REPORT_PDU }],
  },
  '+CMGR response with its PDU and OK': {
    input: `\r\n+CMGR: 0,,25\r\n${STATUS_REPORT_PDU}\r\n\r\nOK\r\n`,
    frames: [{ kind: 'pdu', header: '+CMGR: 0,,25', hex: STATUS_REPORT_PDU }, { kind: 'line', text: 'OK' }],
  },
  '+CMGR response whose PDU carries SIM record fill (the framer keeps every FF)': {
    input: `\r\n+CMGR: 0,,175\r\n${STATUS_REPORT_PDU}${'FF'.repeat(150)}\r\n\r\nOK\r\n`,
    frames: [{ kind: 'pdu', header: '+CMGR: 0,,175', hex: `${STATUS_REPORT_PDU}${'FF'.repeat(150)}` }, { kind: 'line', text: 'OK' }],
  },
  'URC noise between a response line and OK': {
    input: '\r\n+CREG: 0,1\r\n\r\n^RSSI: 14\r\n\r\n+CMTI: "SM",3\r\n\r\nOK\r\n',
    frames: [
      { kind: 'line', text: '+CREG: 0,1' },
      { kind: 'line', text: '^RSSI: 14' },
      { kind: 'line', text: '+CMTI: "SM",3' },
      { kind: 'line', text: 'OK' },
    ],
  },
  'bare LF and bare CR line ends, as some firmwares send': {
    input: 'OK\nERROR\r+CMS ERROR: 332\r\n',
    frames: [{ kind: 'line', text: 'OK' }, { kind: 'line', text: 'ERROR' }, { kind: 'line', text: '+CMS ERROR: 332' }],
  },
  'a +CMGR header followed by OK instead of a PDU (empty slot) keeps both lines': {
    input: '\r\n+CMGR: 0,,0\r\n\r\nOK\r\n',
    frames: [{ kind: 'line', text: '+CMGR: 0,,0' }, { kind: 'line', text: 'OK' }],
  },
};

describe('AtFramer', () => {
  for (const [name, fixture] of Object.entries(FIXTURES)) {
    it(`frames ${name}, whole and one byte at a time`, () => {
      expect(whole(fixture.input)).toEqual(fixture.frames);
      expect(byteByByte(fixture.input)).toEqual(fixture.frames);
    });
  }

  it('frames every fixture concatenated into one stream the same whole and byte by byte', () => {
    const stream = Object.values(FIXTURES).map((f) => f.input).join('');
    const expected = Object.values(FIXTURES).flatMap((f) => f.frames);
    expect(whole(stream)).toEqual(expected);
    expect(byteByByte(stream)).toEqual(expected);
  });

  it('counts an over-long line instead of growing without bound', () => {
    const framer = new AtFramer();
    expect(framer.push('A'.repeat(5000))).toEqual([]);
    expect(framer.overflowCount).toBe(1);
  });
});

describe('AT line classification', () => {
  it('parses numeric and verbose +CMS / +CME errors to the same code (TS 27.005 §3.2.5, TS 27.007 §9.2)', () => {
    expect(parseFinal('+CMS ERROR: 332')).toEqual({ kind: 'cms-error', code: 332, text: '332' });
    expect(parseFinal('+CMS ERROR: Network timeout')).toEqual({ kind: 'cms-error', code: 332, text: 'Network timeout' });
    expect(parseFinal('+CMS ERROR: invalid PDU mode parameter')?.kind).toBe('cms-error');
    expect(parseFinal('+CMS ERROR: invalid PDU mode parameter')).toMatchObject({ code: 304 });
    expect(parseFinal('+CME ERROR: SIM PIN required')).toMatchObject({ kind: 'cme-error', code: 11 });
    expect(parseFinal('+CME ERROR: something odd')).toEqual({ kind: 'cme-error', code: null, text: 'something odd' });
    expect(parseFinal('OK')).toEqual({ kind: 'ok' });
    expect(parseFinal('NO CARRIER')).toEqual({ kind: 'error', text: 'NO CARRIER' });
    expect(parseFinal('+CSQ: 1,2')).toBeNull();
  });

  it('routes URCs apart, unless the command in flight expects that prefix', () => {
    expect(classifyLine('+CMTI: "SM",3')).toEqual({ kind: 'urc', name: '+CMTI', args: '"SM",3' });
    expect(classifyLine('^RSSI: 14')).toEqual({ kind: 'urc', name: '^RSSI', args: '14' });
    expect(classifyLine('RING')).toEqual({ kind: 'urc', name: 'RING', args: '' });
    expect(classifyLine('+CREG: 0,1', '+CREG')).toEqual({ kind: 'info', text: '+CREG: 0,1' });
    expect(classifyLine('+CREG: 1')).toEqual({ kind: 'urc', name: '+CREG', args: '1' });
    expect(classifyLine('+CSQ: 21,99', '+CSQ')).toEqual({ kind: 'info', text: '+CSQ: 21,99' });
  });

  it('splits quoted argument lists', () => {
    expect(splitArgs('0,0,"Vodafone, IE",7')).toEqual(['0', '0', 'Vodafone, IE', '7']);
  });

  it('treats network congestion as temporary and an unassigned number as permanent (TS 24.011 Table 8.4)', () => {
    for (const code of [41, 42, 47, 331, 332, 500]) expect(isTemporaryCmsError(code)).toBe(true);
    for (const code of [1, 21, 28, 304]) expect(isTemporaryCmsError(code)).toBe(false);
    expect(isTemporaryCmsError(612)).toBe(true);
  });
});
