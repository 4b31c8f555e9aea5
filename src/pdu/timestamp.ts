/**
 * TS 23.040 §9.2.3.11 TP-Service-Centre-Time-Stamp (also the TP-Discharge-Time of §9.2.3.13):
 * seven octets of swapped semi-octets, year month day hour minute second time-zone. The zone is
 * in quarters of an hour; bit 3 of its octet is the sign (1 = negative).
 */
import { GatewayError } from '../common/errors.js';
import type { OctetReader } from './octets.js';

export interface DecodedTimestamp {
  /** Local time with its offset, e.g. 2026-11-21T21:49:11+01:00. */
  local: string;
  /** The same moment in UTC, ISO-8601. */
  instant: string;
  /** Offset from UTC in minutes (quarters of an hour * 15). */
  offsetMinutes: number;
}

function swappedBcd(octet: number, field: string): number {
  const tens = octet & 0x0f;
  const units = octet >> 4;
  if (tens > 9 || units > 9) throw new GatewayError('PDU_BAD_TIMESTAMP', `${field} holds 0x${octet.toString(16)}, not two digits`, { details: { field } });
  return tens * 10 + units;
}

const pad = (n: number): string => String(n).padStart(2, '0');

export function readTimestamp(reader: OctetReader, field: string): DecodedTimestamp {
  const octets = reader.take(7, field);
  const [yy, month, day, hour, minute, second] = Array.from(octets.subarray(0, 6), (o) => swappedBcd(o, field));
  const zoneOctet = octets[6] as number;
  const quarters = swappedBcd(zoneOctet & 0xf7, field);
  const offsetMinutes = (zoneOctet & 0x08 ? -1 : 1) * quarters * 15;
  // Two-digit years: the SMS era starts in the 1990s, and 23.040 gives no century; 90-99 -> 19xx.
  const year = (yy as number) >= 90 ? 1900 + (yy as number) : 2000 + (yy as number);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const local = `${year}-${pad(month as number)}-${pad(day as number)}T${pad(hour as number)}:${pad(minute as number)}:${pad(second as number)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  const utcMs = Date.UTC(year, (month as number) - 1, day, hour, minute, second) - offsetMinutes * 60_000;
  if (Number.isNaN(utcMs) || (month as number) < 1 || (month as number) > 12 || (day as number) < 1 || (day as number) > 31) {
    throw new GatewayError('PDU_BAD_TIMESTAMP', `${field} is not a valid date`, { details: { field, local } });
  }
  return { local, instant: new Date(utcMs).toISOString(), offsetMinutes };
}
