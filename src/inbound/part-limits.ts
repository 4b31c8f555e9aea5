/**
 * Bounds on the parts of concatenated MO messages held while their groups are incomplete
 * (TS 23.040 §9.2.3.24.1 leaves the receiver to choose how long and how many). Without them a
 * peer sending first parts that never complete grows inbound_parts without end.
 *
 * Over a bound the new part is refused, never stored: the SMPP transport answers its deliver_sm
 * with ESME_RX_T_APPN (SMPP 3.4 §5.1.3, temporary: the SMSC keeps it and retries later), a modem
 * leaves it on the SIM. The part that completes its group is always accepted, since storing it
 * removes its group's parts; so the counts never exceed the bounds, and a held group can finish.
 * Refusing rather than delivering older groups early keeps a flood from cutting other senders'
 * messages into incomplete pieces.
 */
import type { AdmitPart, PartCounts, PartLimitName } from '../store/sqlite/inbound-store.js';

export interface InboundPartLimits {
  /** Parts held per originator (transport and sender address); a 255-part message must fit. */
  maxPartsPerOriginator: number;
  /** Parts held on the gateway, every originator. */
  maxParts: number;
}

/** Config `inbound.maxPartsPerOriginator` and `inbound.maxParts` when left out. */
export const DEFAULT_INBOUND_PART_LIMITS: InboundPartLimits = { maxPartsPerOriginator: 300, maxParts: 50_000 };

/** The bound a new part would pass, or null when it may be stored. */
export function exceededPartLimit(counts: PartCounts, limits: InboundPartLimits): PartLimitName | null {
  if (counts.completesGroup) return null;
  if (counts.originatorParts >= limits.maxPartsPerOriginator) return 'originator';
  if (counts.totalParts >= limits.maxParts) return 'total';
  return null;
}

export function partAdmission(limits: InboundPartLimits): AdmitPart {
  return (counts) => {
    const limit = exceededPartLimit(counts, limits);
    return limit === null ? { kind: 'accept' } : { kind: 'refuse', limit };
  };
}
