/**
 * Hex text and a bounds-checked octet reader for PDUs. Every short or malformed input is a coded
 * GatewayError, never a silently shortened field.
 */
import { GatewayError } from '../common/errors.js';

export function hexToOctets(hex: string): Uint8Array {
  const clean = hex.trim();
  if (clean.length % 2 !== 0 || !/^[0-9A-Fa-f]*$/.test(clean)) {
    throw new GatewayError('PDU_BAD_HEX', 'PDU is not an even number of hex digits', { details: { hexChars: clean.length } });
  }
  return Uint8Array.from(Buffer.from(clean, 'hex'));
}

export function octetsToHex(octets: Uint8Array): string {
  return Buffer.from(octets).toString('hex').toUpperCase();
}

export class OctetReader {
  private offset = 0;

  constructor(private readonly octets: Uint8Array) {}

  get position(): number {
    return this.offset;
  }

  get remaining(): number {
    return this.octets.length - this.offset;
  }

  /** The next octet without consuming it. */
  peek(field: string): number {
    const octet = this.octets[this.offset];
    if (octet === undefined) throw new GatewayError('PDU_TRUNCATED', `PDU ends before ${field}`, { details: { field, offset: this.offset } });
    return octet;
  }

  /** Reads one octet; `field` names the TPDU field for the error. */
  octet(field: string): number {
    return this.take(1, field)[0] as number;
  }

  take(count: number, field: string): Uint8Array {
    if (count < 0 || this.offset + count > this.octets.length) {
      throw new GatewayError('PDU_TRUNCATED', `PDU ends inside ${field}: needs ${count} octets at offset ${this.offset}, has ${this.remaining}`, {
        details: { field, offset: this.offset, needed: count, remaining: this.remaining },
      });
    }
    const slice = this.octets.subarray(this.offset, this.offset + count);
    this.offset += count;
    return slice;
  }

  /** The octets not read yet, without consuming them. */
  peekRest(): Uint8Array {
    return this.octets.subarray(this.offset);
  }

  rest(): Uint8Array {
    return this.take(this.remaining, 'rest');
  }
}
