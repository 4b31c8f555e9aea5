/**
 * The TIME of `smsgate webhook replay --since TIME`: a duration back from now (`90s`, `30m`, `2h`,
 * `7d`) or an ISO-8601 date-time that names its zone (`2026-11-21T14:00:00Z`, `...+01:00`). A
 * date-time without a zone is refused rather than guessed: the machine's zone is not the operator's.
 */
const DURATION_UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})([smhd])$/;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

export type SinceTime = { ok: true; sinceMs: number } | { ok: false; reason: string };

export function parseSinceTime(text: string, nowMs: number): SinceTime {
  const duration = DURATION.exec(text);
  if (duration !== null) {
    const unit = duration[2] as keyof typeof DURATION_UNIT_MS;
    return { ok: true, sinceMs: nowMs - Number(duration[1]) * DURATION_UNIT_MS[unit] };
  }
  if (ISO_WITH_ZONE.test(text)) {
    const sinceMs = Date.parse(text);
    if (Number.isFinite(sinceMs)) return { ok: true, sinceMs };
  }
  return { ok: false, reason: `TIME '${text}' must be a duration (90s, 30m, 2h, 7d) or an ISO-8601 time with Z or an offset (2026-11-21T14:00:00Z)` };
}
