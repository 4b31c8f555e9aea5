/**
 * Inbound addresses (a route's --to, a message's To and From) are compared in one form: a number
 * (digits with an optional leading '+') is normalised like a campaign msisdn, with the deployment's
 * numbering plan (config `numbering.country`; default Ireland's, SPEC "Recipient":
 * 0871234567, +353871234567 and 00353871234567 are all 353871234567), so a route, an opt-out and
 * the campaign processor agree on one stored form; a short code stays as it is (normalizeMsisdn
 * leaves other digits unchanged); anything else (an alphanumeric originator, a modem named by its
 * device) is kept trimmed.
 */
import { normalizeMsisdn, numberingPlanFor, type NumberingPlan } from '../sms/index.js';

export function normalizeInboundAddress(raw: string, plan: NumberingPlan = numberingPlanFor()): string {
  const trimmed = raw.trim();
  const result = normalizeMsisdn(trimmed, plan);
  return result.ok ? result.msisdn : trimmed;
}

/** A route's --to must be a number: 1..20 characters of digits with an optional leading '+'. */
export function parseRouteNumber(raw: string, plan: NumberingPlan = numberingPlanFor()): { ok: true; address: string } | { ok: false; reason: string } {
  const result = normalizeMsisdn(raw.trim(), plan);
  if (!result.ok) return { ok: false, reason: `--to '${raw}' is not a number (digits with an optional leading +, at most 20): ${result.reason}` };
  return { ok: true, address: result.msisdn };
}
