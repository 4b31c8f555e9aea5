/**
 * SMPP 3.4 §5.1.3 command_status values, with smsgate's classification:
 * - 'temporary': the same PDU may succeed later (throttling, queue full, system error) so the
 *   part comes back temporary and the engine retries it;
 * - 'permanent': the PDU itself is wrong for this SMSC (bad address, bad data coding, refused)
 *   and a retry would get the same answer, so the part fails with the status name;
 * - 'bind': answers to a bind; the bind is retried slowly (see reconnect.ts).
 * Values the table does not know are permanent and named `ESME_0xNNNNNNNN` (never guessed).
 */
export type CommandStatusKind = 'ok' | 'temporary' | 'permanent' | 'bind';

export interface CommandStatusInfo {
  name: string;
  kind: CommandStatusKind;
  description: string;
}

export const COMMAND_STATUS: Readonly<Record<number, CommandStatusInfo>> = {
  0x00000000: { name: 'ESME_ROK', kind: 'ok', description: 'No error' },
  0x00000001: { name: 'ESME_RINVMSGLEN', kind: 'permanent', description: 'Message length is invalid' },
  0x00000002: { name: 'ESME_RINVCMDLEN', kind: 'permanent', description: 'Command length is invalid' },
  0x00000003: { name: 'ESME_RINVCMDID', kind: 'permanent', description: 'Invalid command id' },
  0x00000004: { name: 'ESME_RINVBNDSTS', kind: 'temporary', description: 'Incorrect bind status for given command' },
  0x00000005: { name: 'ESME_RALYBND', kind: 'bind', description: 'ESME already in bound state' },
  0x00000006: { name: 'ESME_RINVPRTFLG', kind: 'permanent', description: 'Invalid priority flag' },
  0x00000007: { name: 'ESME_RINVREGDLVFLG', kind: 'permanent', description: 'Invalid registered delivery flag' },
  0x00000008: { name: 'ESME_RSYSERR', kind: 'temporary', description: 'System error' },
  0x0000000a: { name: 'ESME_RINVSRCADR', kind: 'permanent', description: 'Invalid source address' },
  0x0000000b: { name: 'ESME_RINVDSTADR', kind: 'permanent', description: 'Invalid destination address' },
  0x0000000c: { name: 'ESME_RINVMSGID', kind: 'permanent', description: 'Message id is invalid' },
  0x0000000d: { name: 'ESME_RBINDFAIL', kind: 'bind', description: 'Bind failed' },
  0x0000000e: { name: 'ESME_RINVPASWD', kind: 'bind', description: 'Invalid password' },
  0x0000000f: { name: 'ESME_RINVSYSID', kind: 'bind', description: 'Invalid system id' },
  0x00000011: { name: 'ESME_RCANCELFAIL', kind: 'permanent', description: 'cancel_sm failed' },
  0x00000013: { name: 'ESME_RREPLACEFAIL', kind: 'permanent', description: 'replace_sm failed' },
  0x00000014: { name: 'ESME_RMSGQFUL', kind: 'temporary', description: 'Message queue full' },
  0x00000015: { name: 'ESME_RINVSERTYP', kind: 'permanent', description: 'Invalid service type' },
  0x00000033: { name: 'ESME_RINVNUMDESTS', kind: 'permanent', description: 'Invalid number of destinations' },
  0x00000034: { name: 'ESME_RINVDLNAME', kind: 'permanent', description: 'Invalid distribution list name' },
  0x00000040: { name: 'ESME_RINVDESTFLAG', kind: 'permanent', description: 'Destination flag is invalid' },
  0x00000042: { name: 'ESME_RINVSUBREP', kind: 'permanent', description: 'Invalid submit with replace request' },
  0x00000043: { name: 'ESME_RINVESMCLASS', kind: 'permanent', description: 'Invalid esm_class field data' },
  0x00000044: { name: 'ESME_RCNTSUBDL', kind: 'permanent', description: 'Cannot submit to distribution list' },
  0x00000045: { name: 'ESME_RSUBMITFAIL', kind: 'permanent', description: 'submit_sm or submit_multi failed' },
  0x00000048: { name: 'ESME_RINVSRCTON', kind: 'permanent', description: 'Invalid source address TON' },
  0x00000049: { name: 'ESME_RINVSRCNPI', kind: 'permanent', description: 'Invalid source address NPI' },
  0x00000050: { name: 'ESME_RINVDSTTON', kind: 'permanent', description: 'Invalid destination address TON' },
  0x00000051: { name: 'ESME_RINVDSTNPI', kind: 'permanent', description: 'Invalid destination address NPI' },
  0x00000053: { name: 'ESME_RINVSYSTYP', kind: 'bind', description: 'Invalid system_type field' },
  0x00000054: { name: 'ESME_RINVREPFLAG', kind: 'permanent', description: 'Invalid replace_if_present flag' },
  0x00000055: { name: 'ESME_RINVNUMMSGS', kind: 'permanent', description: 'Invalid number of messages' },
  0x00000058: { name: 'ESME_RTHROTTLED', kind: 'temporary', description: 'Throttling error (ESME has exceeded allowed message limits)' },
  0x00000061: { name: 'ESME_RINVSCHED', kind: 'permanent', description: 'Invalid scheduled delivery time' },
  0x00000062: { name: 'ESME_RINVEXPIRY', kind: 'permanent', description: 'Invalid message validity period (expiry time)' },
  0x00000063: { name: 'ESME_RINVDFTMSGID', kind: 'permanent', description: 'Predefined message invalid or not found' },
  0x00000064: { name: 'ESME_RX_T_APPN', kind: 'temporary', description: 'ESME receiver temporary app error code' },
  0x00000065: { name: 'ESME_RX_P_APPN', kind: 'permanent', description: 'ESME receiver permanent app error code' },
  0x00000066: { name: 'ESME_RX_R_APPN', kind: 'permanent', description: 'ESME receiver reject message error code' },
  0x00000067: { name: 'ESME_RQUERYFAIL', kind: 'permanent', description: 'query_sm request failed' },
  0x000000c0: { name: 'ESME_RINVOPTPARSTREAM', kind: 'permanent', description: 'Error in the optional part of the PDU body' },
  0x000000c1: { name: 'ESME_ROPTPARNOTALLWD', kind: 'permanent', description: 'Optional parameter not allowed' },
  0x000000c2: { name: 'ESME_RINVPARLEN', kind: 'permanent', description: 'Invalid parameter length' },
  0x000000c3: { name: 'ESME_RMISSINGOPTPARAM', kind: 'permanent', description: 'Expected optional parameter missing' },
  0x000000c4: { name: 'ESME_RINVOPTPARAMVAL', kind: 'permanent', description: 'Invalid optional parameter value' },
  0x000000fe: { name: 'ESME_RDELIVERYFAILURE', kind: 'temporary', description: 'Delivery failure (data_sm_resp)' },
  0x000000ff: { name: 'ESME_RUNKNOWNERR', kind: 'temporary', description: 'Unknown error' },
};

/** Name → value, for code that answers the SMSC (deliver_sm_resp with ESME_RX_T_APPN). */
export const COMMAND_STATUS_CODE = {
  ESME_ROK: 0x00000000,
  ESME_RINVCMDLEN: 0x00000002,
  ESME_RINVCMDID: 0x00000003,
  ESME_RINVBNDSTS: 0x00000004,
  ESME_RBINDFAIL: 0x0000000d,
  ESME_RINVPASWD: 0x0000000e,
  ESME_RINVSYSID: 0x0000000f,
  ESME_RMSGQFUL: 0x00000014,
  ESME_RTHROTTLED: 0x00000058,
  ESME_RSUBMITFAIL: 0x00000045,
  ESME_RINVSRCADR: 0x0000000a,
  ESME_RINVDSTADR: 0x0000000b,
  ESME_RSYSERR: 0x00000008,
  ESME_RX_T_APPN: 0x00000064,
  ESME_RX_P_APPN: 0x00000065,
} as const;

/** Statuses that mean "send slower": the bind backs off (see throttle.ts). */
export const SLOW_DOWN_STATUSES: ReadonlySet<number> = new Set([
  COMMAND_STATUS_CODE.ESME_RTHROTTLED,
  COMMAND_STATUS_CODE.ESME_RMSGQFUL,
]);

function hex32(value: number): string {
  return `0x${value.toString(16).toUpperCase().padStart(8, '0')}`;
}

export function commandStatusInfo(commandStatus: number): CommandStatusInfo {
  return (
    COMMAND_STATUS[commandStatus] ?? {
      name: `ESME_${hex32(commandStatus)}`,
      kind: 'permanent',
      description: 'Not defined by SMPP 3.4 (reserved or SMSC-specific)',
    }
  );
}

/** "ESME_RINVPASWD (0x0000000E): Invalid password", for state reasons and logs. */
export function describeCommandStatus(commandStatus: number): string {
  const info = commandStatusInfo(commandStatus);
  return `${info.name} (${hex32(commandStatus)}): ${info.description}`;
}
