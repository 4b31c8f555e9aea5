/**
 * Inbound addresses (a route's --to, a message's To and From) are compared in one form: a number
 * (digits with an optional leading '+') is normalised like a campaign msisdn (SPEC "Recipient":
 * 0871234567, +353871234567 and 00353871234567 are all 353871234567); a short code stays as it is
 * (normalizeMsisdn leaves other digits unchanged); anything else (an alphanumeric originator, a
 * modem named by its device) is kept trimmed.
 */
import { normalizeMsisdn } from '../sms/index.js';

export function normalizeInboundAddress(raw: string): string {
  const trimmed = raw.trim();
  const result = normalizeMsisdn(trimmed);
  return result.ok ? result.msisdn : trimmed;
}

/** A route's --to must be a number: 1..20 characters of digits with an optional leading '+'. */
export function parseRouteNumber(raw: string): { ok: true; address: string } | { ok: false; reason: string } {
  const result = normalizeMsisdn(raw.trim());
  if (!result.ok) return { ok: false, reason: `--to '${raw}' is not a number (digits with an optional leading +, at most 20): ${result.reason}` };
  return { ok: true, address: result.msisdn };
}
