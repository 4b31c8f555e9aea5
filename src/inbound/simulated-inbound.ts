/**
 * What `smsgate simulate inbound` injects: a message a phone sends to a
 * simulator transport, as that transport's parts. A text up to 160 characters is one plain part;
 * a longer one is cut into 67-unit UCS-2 parts (TS 23.040 concatenation, an 8-bit reference) so the
 * injection goes through the same reassembly as a real multi-part message, a surrogate pair cut
 * between parts included.
 */
import { encodeUcs2 } from '../sms/index.js';
import type { InboundMessage } from '../transports/transport.js';

const SINGLE_PART_MAX_CHARS = 160;
const UCS2_UNITS_PER_PART = 67;
const MAX_PARTS = 255;

export function simulatedInboundParts(input: { from: string; to: string; text: string; reference: number; receivedAt: string }): InboundMessage[] {
  const { from, to, text, receivedAt } = input;
  if (text.length <= SINGLE_PART_MAX_CHARS) return [{ from, to, text, receivedAt, raw: text }];
  const total = Math.ceil(text.length / UCS2_UNITS_PER_PART);
  if (total > MAX_PARTS) throw new RangeError(`a text of ${text.length} UTF-16 units needs ${total} parts; SMS allows ${MAX_PARTS}`);
  const parts: InboundMessage[] = [];
  for (let sequence = 1; sequence <= total; sequence++) {
    const segment = text.slice((sequence - 1) * UCS2_UNITS_PER_PART, sequence * UCS2_UNITS_PER_PART);
    const octetsHex = Buffer.from(encodeUcs2(segment)).toString('hex');
    parts.push({
      from, to, text: segment, receivedAt, raw: octetsHex,
      content: { coding: 'ucs2', octetsHex },
      concat: { scheme: 'udh8', reference: input.reference & 0xff, total, sequence },
    });
  }
  return parts;
}
