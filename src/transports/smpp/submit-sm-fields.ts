/**
 * The submit_sm fields by their SMPP 3.4 names: the planner (submit-pdu.ts) fills them and the
 * encoder (submit-sm-encoder.ts) writes them, so both import them from here and neither imports
 * the other's module for a type.
 */

/**
 * The submit_sm mandatory parameters smsgate chooses (SMPP 3.4 §4.4.1), by their spec names. The
 * three it always sends as fixed values (schedule_delivery_time '', replace_if_present_flag 0,
 * sm_default_msg_id 0) are left out; a decoder of the wire bytes adds them back.
 */
export interface SubmitSmMandatoryFields {
  service_type: string;
  source_addr_ton: number;
  source_addr_npi: number;
  source_addr: string;
  dest_addr_ton: number;
  dest_addr_npi: number;
  destination_addr: string;
  esm_class: number;
  protocol_id: number;
  priority_flag: number;
  validity_period: string;
  registered_delivery: number;
  data_coding: number;
  /** Always octets: a Buffer makes the smpp package send it unchanged. */
  short_message: Buffer;
}

/** submit_sm fields by their SMPP 3.4 names, with the optional TLVs smsgate may add (§5.3.2). */
export interface SubmitSmFields extends SubmitSmMandatoryFields {
  sar_msg_ref_num?: number;
  sar_total_segments?: number;
  sar_segment_seqnum?: number;
  message_payload?: Buffer;
}
