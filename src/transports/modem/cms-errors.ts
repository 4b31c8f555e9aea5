/**
 * +CMS ERROR and +CME ERROR codes as data: what each means and whether a send that failed with
 * it is worth retrying. Sources:
 * - 3GPP TS 27.005 §3.2.5 (<err> values 0..127 are TS 24.011 Annex E-2 RP-cause values,
 *   128..255 are TS 23.040 §9.2.3.22 TP-FCS values, 300..500 are ME/TA errors);
 * - 3GPP TS 24.011 §8.2.5.4 and Table 8.4 (RP-cause for mobile originating SMS);
 * - 3GPP TS 27.007 §9.2 (+CME ERROR values).
 * A code not in the table (e.g. the manufacturer range 512+) is treated as temporary: an unknown
 * failure should be retried a bounded number of times rather than lose the message.
 */

export interface ErrorCodeInfo {
  /** Verbose text as the spec words it (AT+CMEE=2 prints this, give or take letter case). */
  name: string;
  temporary: boolean;
}

export const CMS_ERRORS: Readonly<Record<number, ErrorCodeInfo>> = {
  // TS 24.011 Table 8.4 (RP-cause, mobile originating)
  1: { name: 'Unassigned (unallocated) number', temporary: false },
  8: { name: 'Operator determined barring', temporary: false },
  10: { name: 'Call barred', temporary: false },
  17: { name: 'Network failure', temporary: true },
  21: { name: 'Short message transfer rejected', temporary: false },
  22: { name: 'Memory capacity exceeded', temporary: true },
  27: { name: 'Destination out of service', temporary: true },
  28: { name: 'Unidentified subscriber', temporary: false },
  29: { name: 'Facility rejected', temporary: false },
  30: { name: 'Unknown subscriber', temporary: false },
  38: { name: 'Network out of order', temporary: true },
  41: { name: 'Temporary failure', temporary: true },
  42: { name: 'Congestion', temporary: true },
  47: { name: 'Resources unavailable, unspecified', temporary: true },
  50: { name: 'Requested facility not subscribed', temporary: false },
  69: { name: 'Requested facility not implemented', temporary: false },
  81: { name: 'Invalid short message transfer reference value', temporary: false },
  95: { name: 'Invalid message, unspecified', temporary: false },
  96: { name: 'Invalid mandatory information', temporary: false },
  97: { name: 'Message type non-existent or not implemented', temporary: false },
  98: { name: 'Message not compatible with short message protocol state', temporary: false },
  99: { name: 'Information element non-existent or not implemented', temporary: false },
  111: { name: 'Protocol error, unspecified', temporary: false },
  127: { name: 'Interworking, unspecified', temporary: false },
  // TS 23.040 §9.2.3.22 (TP-FCS)
  128: { name: 'Telematic interworking not supported', temporary: false },
  129: { name: 'Short message Type 0 not supported', temporary: false },
  130: { name: 'Cannot replace short message', temporary: false },
  143: { name: 'Unspecified TP-PID error', temporary: false },
  144: { name: 'Data coding scheme (alphabet) not supported', temporary: false },
  145: { name: 'Message class not supported', temporary: false },
  159: { name: 'Unspecified TP-DCS error', temporary: false },
  160: { name: 'Command cannot be actioned', temporary: false },
  161: { name: 'Command unsupported', temporary: false },
  175: { name: 'Unspecified TP-Command error', temporary: false },
  176: { name: 'TPDU not supported', temporary: false },
  192: { name: 'SC busy', temporary: true },
  193: { name: 'No SC subscription', temporary: false },
  194: { name: 'SC system failure', temporary: true },
  195: { name: 'Invalid SME address', temporary: false },
  196: { name: 'Destination SME barred', temporary: false },
  197: { name: 'SM Rejected-Duplicate SM', temporary: false },
  198: { name: 'TP-VPF not supported', temporary: false },
  199: { name: 'TP-VP not supported', temporary: false },
  208: { name: '(U)SIM SMS storage full', temporary: true },
  209: { name: 'No SMS storage capability in (U)SIM', temporary: false },
  210: { name: 'Error in MS', temporary: true },
  211: { name: 'Memory Capacity Exceeded', temporary: true },
  212: { name: '(U)SIM Application Toolkit Busy', temporary: true },
  213: { name: '(U)SIM data download error', temporary: true },
  255: { name: 'Unspecified error cause', temporary: true },
  // TS 27.005 §3.2.5 (ME/TA errors)
  300: { name: 'ME failure', temporary: true },
  301: { name: 'SMS service of ME reserved', temporary: false },
  302: { name: 'operation not allowed', temporary: false },
  303: { name: 'operation not supported', temporary: false },
  304: { name: 'invalid PDU mode parameter', temporary: false },
  305: { name: 'invalid text mode parameter', temporary: false },
  310: { name: 'SIM not inserted', temporary: true },
  311: { name: 'SIM PIN required', temporary: true },
  312: { name: 'PH-SIM PIN required', temporary: true },
  313: { name: 'SIM failure', temporary: true },
  314: { name: 'SIM busy', temporary: true },
  315: { name: 'SIM wrong', temporary: true },
  316: { name: 'SIM PUK required', temporary: true },
  317: { name: 'SIM PIN2 required', temporary: true },
  318: { name: 'SIM PUK2 required', temporary: true },
  320: { name: 'memory failure', temporary: true },
  321: { name: 'invalid memory index', temporary: false },
  322: { name: 'memory full', temporary: true },
  330: { name: 'SMSC address unknown', temporary: true },
  331: { name: 'no network service', temporary: true },
  332: { name: 'network timeout', temporary: true },
  340: { name: 'no +CNMA acknowledgement expected', temporary: false },
  500: { name: 'unknown error', temporary: true },
};

/** TS 27.007 §9.2.1 and §9.2.2: the +CME ERROR values a gateway meets. */
export const CME_ERRORS: Readonly<Record<number, ErrorCodeInfo>> = {
  0: { name: 'phone failure', temporary: true },
  3: { name: 'operation not allowed', temporary: false },
  4: { name: 'operation not supported', temporary: false },
  10: { name: 'SIM not inserted', temporary: true },
  11: { name: 'SIM PIN required', temporary: true },
  12: { name: 'SIM PUK required', temporary: true },
  13: { name: 'SIM failure', temporary: true },
  14: { name: 'SIM busy', temporary: true },
  15: { name: 'SIM wrong', temporary: true },
  16: { name: 'incorrect password', temporary: false },
  17: { name: 'SIM PIN2 required', temporary: true },
  18: { name: 'SIM PUK2 required', temporary: true },
  20: { name: 'memory full', temporary: true },
  21: { name: 'invalid index', temporary: false },
  22: { name: 'not found', temporary: false },
  30: { name: 'no network service', temporary: true },
  31: { name: 'network timeout', temporary: true },
  100: { name: 'unknown', temporary: true },
};

function byVerboseName(table: Readonly<Record<number, ErrorCodeInfo>>): Map<string, number> {
  const map = new Map<string, number>();
  for (const [code, info] of Object.entries(table)) map.set(normalizeVerbose(info.name), Number(code));
  return map;
}

function normalizeVerbose(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9+]+/g, ' ').trim();
}

const CMS_BY_NAME = byVerboseName(CMS_ERRORS);
const CME_BY_NAME = byVerboseName(CME_ERRORS);

/** The numeric code behind an AT+CMEE=2 verbose text, or null when the text is not a known one. */
export function cmsCodeFromVerbose(text: string): number | null {
  return CMS_BY_NAME.get(normalizeVerbose(text)) ?? null;
}

export function cmeCodeFromVerbose(text: string): number | null {
  return CME_BY_NAME.get(normalizeVerbose(text)) ?? null;
}

/** True when a send that failed with this +CMS ERROR code may succeed if tried again. */
export function isTemporaryCmsError(code: number | null): boolean {
  if (code === null) return true;
  return CMS_ERRORS[code]?.temporary ?? true;
}

export function isTemporaryCmeError(code: number | null): boolean {
  if (code === null) return true;
  return CME_ERRORS[code]?.temporary ?? true;
}
