/**
 * The SMS text core: pure functions, no I/O. Text replacements, GSM-7 / UCS-2 detection, part
 * counting and splitting, UDH and septet packing, msisdn and sender id rules.
 */
export type { NationalLanguage } from './national-languages.js';
export { NATIONAL_LANGUAGE_ID, NATIONAL_LANGUAGE_TABLES, isNationalLanguage } from './national-languages.js';
export { GSM7_DEFAULT_TABLE, GSM7_DEFAULT_EXTENSION, GSM7_ESCAPE } from './gsm7-alphabet.js';
export type { Gsm7Shift } from './gsm7-charset.js';
export { applyReplacements, TEXT_REPLACEMENTS } from './replacements.js';
export type { Encoding, SmsOptions } from './message-layout.js';
export type { TextAnalysis, MessagePlan } from './message-plan.js';
export { analyzeText, planMessage } from './message-plan.js';
export { encodeGsm7Septets, decodeGsm7Septets } from './gsm7.js';
export { packSeptets, unpackSeptets } from './septet-packing.js';
export { encodeUcs2, decodeUcs2 } from './ucs2.js';
export { concatUdh, fillBitsAfterUdh, buildUdh, nationalShiftIes, IEI } from './udh.js';
export type { EncodedPart, ConcatSettings } from './encode-parts.js';
export { encodeParts, packUserData, MAX_CONCAT_PARTS } from './encode-parts.js';
export type { MsisdnResult } from './msisdn.js';
export { normalizeMsisdn } from './msisdn.js';
export { DEFAULT_NUMBERING_COUNTRY, NUMBERING_COUNTRIES, NUMBERING_PLANS, numberingPlanFor } from './numbering.js';
export type { NationalForm, NumberingCountry, NumberingPlan } from './numbering.js';
export type { SenderKind, SenderResult } from './sender-id.js';
export { validateSender, SENDER_ADDRESSING, SENDER_LIMITS } from './sender-id.js';
export { SEGMENT_LIMITS, USER_DATA_MAX_OCTETS, gsm7SeptetCapacity, ucs2UnitCapacity } from './user-data-capacity.js';
