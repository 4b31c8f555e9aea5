/**
 * smsgate/pdu: the pure 3GPP TS 23.040 codec. SMS-SUBMIT encoding for AT+CMGS in PDU mode,
 * SMS-DELIVER and SMS-STATUS-REPORT (and SMS-SUBMIT) decoding. No I/O.
 */
export { DESTINATION_TYPE_OF_ADDRESS, TYPE_OF_NUMBER, decodeSemiOctets, encodeDestinationAddress, encodeSemiOctets } from './address.js';
export type { DecodedAddress, DestinationNumberType } from './address.js';
export { DCS, parseDcs } from './dcs.js';
export type { Alphabet, DataCodingScheme } from './dcs.js';
export { decodeCmgsPdu, decodePdu } from './decode.js';
export type { DecodeOptions, DecodedPdu } from './decode.js';
export { MT_FLAGS } from './deliver.js';
export type { DecodedDeliver, DecodedStatusReport } from './deliver.js';
export { DEFAULT_VALIDITY_MINUTES, encodePresetSubmitPart, encodeSubmitParts, encodeTextSubmitParts } from './encode.js';
export type { PresetPart, SegmentedMessage, SubmitOptions, SubmitPart } from './encode.js';
export { hexToOctets, octetsToHex } from './octets.js';
export {
  MAX_USER_DATA_OCTETS,
  MTI,
  SUBMIT_FLAGS,
  encodeSubmitTpdu,
  relativeValidityMinutes,
  relativeValidityOctet,
} from './submit.js';
export type { DecodedSubmit, EncodedSubmitPdu, SubmitTpduFields } from './submit.js';
export type { DecodedTimestamp } from './timestamp.js';
export { IEI, decodeUserData } from './user-data.js';
export type { ConcatInfo, DecodedUserData, InformationElement } from './user-data.js';
