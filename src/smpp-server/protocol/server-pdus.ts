/**
 * The PDUs the server writes (SMPP 3.4 §4), as data and small pure builders: which requests have
 * a response of their own, the responses it answers with, and the deliver_sm it sends. Encoding
 * is the `smpp` package's (as our client's), except submit_sm_resp, written directly because it
 * is the one the server writes per accepted message (the package's encoder walks every field
 * with filters, which costs more than the 17 to 82 octets).
 */
import smpp from 'smpp';
import type { OutgoingPdu, PDU } from 'smpp';
import type { BindType, DeliverSmFields } from '../contracts.js';
import { SMPP_HEADER_BYTES } from '../../transports/smpp/frame-reader.js';
import { INTERFACE_VERSION_3_4 } from '../../transports/smpp/smpp-connection.js';

/** SMPP 3.4 §4.1.2: the system_id the server names itself with in bind_*_resp. */
export const SERVER_SYSTEM_ID = 'smsgate';

/** SMPP 3.4 §5.1.2 command ids the server reads before decoding a frame. */
export const COMMAND_ID = {
  submit_sm: 0x00000004,
  submit_sm_resp: 0x80000004,
} as const;

/** SMPP 3.4 §4.1: the bind commands and the session each opens. */
export const BIND_COMMANDS: Readonly<Record<string, BindType>> = {
  bind_transmitter: 'transmitter',
  bind_receiver: 'receiver',
  bind_transceiver: 'transceiver',
};

/**
 * SMPP 3.4 §4: the requests that have a response PDU of their own; any other request
 * (outbind §4.1.7, alert_notification §4.12) is answered, when it must be, by generic_nack.
 */
const REQUESTS_WITH_RESPONSE: ReadonlySet<string> = new Set([
  'bind_transmitter', 'bind_receiver', 'bind_transceiver', 'unbind', 'submit_sm', 'submit_multi', 'deliver_sm',
  'data_sm', 'query_sm', 'cancel_sm', 'replace_sm', 'enquire_link',
]);

/** generic_nack (SMPP 3.4 §4.3) echoing the request's sequence_number. */
export function genericNack(sequenceNumber: number, commandStatus: number): OutgoingPdu {
  return new smpp.PDU('generic_nack', { sequence_number: sequenceNumber, command_status: commandStatus });
}

/**
 * The request's own response with this status (header only when it is not 0, SMPP 3.4 §3.3 and
 * each *_resp's "body not returned if command_status is non-zero"), or generic_nack when the
 * request has no response PDU.
 */
export function responseTo(request: PDU, commandStatus: number, body: Record<string, unknown> = {}): OutgoingPdu {
  if (!REQUESTS_WITH_RESPONSE.has(request.command)) return genericNack(request.sequence_number, commandStatus);
  return request.response(commandStatus === 0 ? { ...body, command_status: 0 } : { command_status: commandStatus });
}

/** bind_*_resp for an accepted bind: system_id, and sc_interface_version when the ESME speaks 3.4 or later (§5.3.2.25). */
export function bindAcceptedBody(interfaceVersion: number): Record<string, unknown> {
  return interfaceVersion >= INTERFACE_VERSION_3_4
    ? { system_id: SERVER_SYSTEM_ID, sc_interface_version: INTERFACE_VERSION_3_4 }
    : { system_id: SERVER_SYSTEM_ID };
}

/**
 * submit_sm_resp (SMPP 3.4 §4.4.2): the message_id as a C-Octet String when command_status is 0,
 * the header alone otherwise. The same octets as the package's request.response({ message_id }).
 */
export class SubmitSmResp implements OutgoingPdu {
  readonly command = 'submit_sm_resp';

  constructor(
    readonly sequence_number: number,
    private readonly commandStatus: number,
    private readonly messageId: string,
  ) {}

  isResponse(): boolean {
    return true;
  }

  toBuffer(): Buffer {
    const bodyOctets = this.commandStatus === 0 ? Buffer.byteLength(this.messageId, 'latin1') + 1 : 0;
    const length = SMPP_HEADER_BYTES + bodyOctets;
    const out = Buffer.alloc(length);
    out.writeUInt32BE(length, 0);
    out.writeUInt32BE(COMMAND_ID.submit_sm_resp, 4);
    out.writeUInt32BE(this.commandStatus >>> 0, 8);
    out.writeUInt32BE(this.sequence_number >>> 0, 12);
    if (bodyOctets > 0) out.write(this.messageId, SMPP_HEADER_BYTES, 'latin1');
    return out;
  }
}

/** SMPP 3.4 §4.6.1: short_message holds at most 254 octets; longer user data goes in message_payload (§5.3.2.32). */
export const SHORT_MESSAGE_MAX_OCTETS = 254;

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

export type DeliverSmParams = { kind: 'ok'; params: Record<string, unknown> } | { kind: 'invalid'; reason: string };

/**
 * The deliver_sm's parameters by their SMPP names, for new smpp.PDU('deliver_sm', ...). The
 * short_message octets go as they are (a Buffer passes the package's message filter untouched);
 * over 254 octets they go in message_payload with an empty short_message. data_coding and
 * esm_class are always set explicitly (the package would otherwise pick its own).
 */
export function deliverSmParams(fields: DeliverSmFields): DeliverSmParams {
  if (!HEX.test(fields.shortMessageHex)) return { kind: 'invalid', reason: 'shortMessageHex is not hex octets' };
  const octets = Buffer.from(fields.shortMessageHex, 'hex');
  const inPayload = octets.length > SHORT_MESSAGE_MAX_OCTETS;
  const params: Record<string, unknown> = {
    service_type: '',
    source_addr_ton: fields.sourceAddrTon,
    source_addr_npi: fields.sourceAddrNpi,
    source_addr: fields.sourceAddr,
    dest_addr_ton: fields.destAddrTon,
    dest_addr_npi: fields.destAddrNpi,
    destination_addr: fields.destinationAddr,
    esm_class: fields.esmClass,
    protocol_id: 0,
    priority_flag: 0,
    schedule_delivery_time: '',
    validity_period: '',
    registered_delivery: 0,
    replace_if_present_flag: 0,
    data_coding: fields.dataCoding,
    sm_default_msg_id: 0,
    short_message: inPayload ? Buffer.alloc(0) : octets,
  };
  if (inPayload) params['message_payload'] = octets;
  if (fields.receiptedMessageId !== undefined) params['receipted_message_id'] = fields.receiptedMessageId;
  if (fields.messageState !== undefined) params['message_state'] = fields.messageState;
  return { kind: 'ok', params };
}
