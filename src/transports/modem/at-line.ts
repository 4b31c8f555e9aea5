/**
 * Classifies one AT line: a final result code that ends a command, an unsolicited result code
 * (URC) that the modem may send at any time, or an information line belonging to the command in
 * flight. Which URC-looking lines are in fact responses (AT+CREG? answers with +CREG:) is the
 * session's call: it passes the prefix the command in flight expects.
 */
import { cmeCodeFromVerbose, cmsCodeFromVerbose } from './cms-errors.js';

export type FinalResult =
  | { kind: 'ok' }
  /** Plain ERROR, or a V.250 §5.7.1 call result such as NO CARRIER. */
  | { kind: 'error'; text: string }
  /** code is null when a verbose text is not one we know; text keeps what the modem said. */
  | { kind: 'cme-error'; code: number | null; text: string }
  | { kind: 'cms-error'; code: number | null; text: string };

export type AtLine =
  | { kind: 'final'; result: FinalResult }
  | { kind: 'urc'; name: string; args: string }
  | { kind: 'info'; text: string };

/** V.250 §5.7.1 final result codes other than OK that end a command. */
const ERROR_FINALS = new Set(['ERROR', 'NO CARRIER', 'BUSY', 'NO ANSWER', 'NO DIALTONE', 'COMMAND NOT SUPPORT', 'TOO MANY PARAMETERS']);

/**
 * Unsolicited result codes by name. Sources: TS 27.005 §3.4.1 (+CMTI, +CMT, +CDSI, +CDS, +CBM),
 * TS 27.007 §7.2/§10.1.22/§7.11/§7.18 (+CREG, +CEREG, +CGREG, +CUSD, +CRING, RING, +CLIP, +CIEV),
 * Huawei "HUAWEI MU609 AT Command Interface Specification" §11 (^RSSI, ^BOOT, ^MODE, ^SRVST, ^SIMST,
 * ^HCSQ, ^DSFLOWRPT), SIMCom SIM800 Series AT Command Manual V1.09 §3.2.x (Call Ready, SMS Ready,
 * RDY, +CFUN, +CPIN, *PSUTTZ, DST, +CTZV, NORMAL POWER DOWN, UNDER-VOLTAGE ...), Quectel EC25 AT
 * Commands Manual V1.3 (+QIND, +QUSIM).
 */
export const URC_NAMES: ReadonlySet<string> = new Set([
  '+CMTI', '+CMT', '+CDSI', '+CDS', '+CBM', '+CREG', '+CEREG', '+CGREG', '+CUSD', '+CRING', 'RING', '+CLIP', '+CIEV',
  '^RSSI', '^BOOT', '^MODE', '^SRVST', '^SIMST', '^HCSQ', '^DSFLOWRPT', '^STIN', '^CEND', '^ORIG', '^CONF', '^CONN',
  '^RFSWITCH', '^NWTIME', 'Call Ready', 'SMS Ready', 'RDY', '+CFUN', '+CPIN', '*PSUTTZ', 'DST', '+CTZV', '+CTZE',
  'NORMAL POWER DOWN', 'UNDER-VOLTAGE POWER DOWN', 'UNDER-VOLTAGE WARNNING', 'OVER-VOLTAGE POWER DOWN',
  'OVER-VOLTAGE WARNNING', '+QIND', '+QUSIM', 'PB DONE', '+PACSP', '+CPSI',
]);

/** The name a line would have as a URC: the text before ':' for +/^/* codes, else the whole line. */
export function lineName(text: string): string {
  const first = text[0];
  if (first === '+' || first === '^' || first === '*') {
    const colon = text.indexOf(':');
    return colon === -1 ? text.trim() : text.slice(0, colon).trim();
  }
  return text.trim();
}

function afterColon(text: string): string {
  const colon = text.indexOf(':');
  return colon === -1 ? '' : text.slice(colon + 1).trim();
}

export function parseFinal(text: string): FinalResult | null {
  const line = text.trim();
  if (line === 'OK') return { kind: 'ok' };
  if (ERROR_FINALS.has(line)) return { kind: 'error', text: line };
  if (line.startsWith('+CMS ERROR:')) {
    const detail = afterColon(line);
    const code = /^\d+$/.test(detail) ? Number(detail) : cmsCodeFromVerbose(detail);
    return { kind: 'cms-error', code, text: detail };
  }
  if (line.startsWith('+CME ERROR:')) {
    const detail = afterColon(line);
    const code = /^\d+$/.test(detail) ? Number(detail) : cmeCodeFromVerbose(detail);
    return { kind: 'cme-error', code, text: detail };
  }
  return null;
}

/**
 * @param expectedPrefix the information-response prefix of the command in flight (e.g. '+CREG'),
 *   so that its answer is not mistaken for the URC of the same name.
 */
export function classifyLine(text: string, expectedPrefix: string | null = null): AtLine {
  const final = parseFinal(text);
  if (final !== null) return { kind: 'final', result: final };
  const name = lineName(text);
  if (URC_NAMES.has(name) && name !== expectedPrefix) return { kind: 'urc', name, args: afterColon(text) };
  return { kind: 'info', text };
}

/** Splits a response's argument list on commas outside double quotes, unquoting each field. */
export function splitArgs(args: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of args) {
    if (ch === '"') quoted = !quoted;
    else if (ch === ',' && !quoted) {
      fields.push(current.trim());
      current = '';
    } else current += ch;
  }
  fields.push(current.trim());
  return fields;
}
