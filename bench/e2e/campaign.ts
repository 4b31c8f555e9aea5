/**
 * The benches' one campaign (bench:e2e, and bench:cluster so its SQLite column is bench:e2e's
 * smsgate run): its text and numbers, its POST /v1/campaign to smsgate serve, and what smsgate's
 * log and the receiver tell about it afterwards.
 */
import { monoMs } from './clock.js';
import type { ReceiverEvents } from './sink-protocol.js';
import type { SinkProcess } from './sinks.js';

/** One GSM-7 part. */
export const CAMPAIGN_TEXT = 'Flash sale: 20% off everything today only. Reply STOP to opt out.';

/** Distinct numbers, one a recipient; every tenth ends in 9 (the sink's UNDELIV suffix). */
export const msisdnFor = (i: number): string => `35386${String(i).padStart(7, '0')}`;

export interface CampaignContent {
  recipients: number;
  msisdnFor: (i: number) => string;
  text: string;
}

/** The POST body, built before the clock starts so its cost is not timed. */
export function campaignBody(content: CampaignContent): string {
  return JSON.stringify({
    text: content.text,
    from: 'Bench',
    recipientInfo: Array.from({ length: content.recipients }, (_, i) => ({ msisdn: content.msisdnFor(i), ClientReference: `b${i}` })),
  });
}

/** POSTs the campaign; acceptedAtMs is the 202's arrival, ms after startedAtMs (monoMs). */
export async function postCampaign(baseUrl: string, token: string, body: string, startedAtMs: number): Promise<{ id: string; acceptedAtMs: number }> {
  const response = await fetch(`${baseUrl}/v1/campaign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  const acceptedAtMs = monoMs() - startedAtMs;
  if (response.status !== 202) throw new Error(`POST /v1/campaign answered ${response.status}: ${await response.text()}`);
  const { id } = (await response.json()) as { id: string };
  return { id, acceptedAtMs };
}

/** The "campaign ready" line's pino time (epoch ms), as ms after the POST was sent. */
export function readyTimeOf(logLines: readonly string[], startedAtEpochMs: number): number | undefined {
  for (const line of logLines) {
    if (!line.includes('"campaign ready"')) continue;
    try {
      const time = (JSON.parse(line) as { time?: unknown }).time;
      if (typeof time === 'number') return time - startedAtEpochMs;
    } catch {
      // Not JSON (a pretty-printed log): no time to read.
    }
  }
  return undefined;
}

/** What went wrong at smsgate's signed-webhook receiver, as notes for the run's figures. */
export function webhookNotes(receiver: SinkProcess, receiverEvents: ReceiverEvents): string[] {
  const notes: string[] = [];
  if (receiver.progress.signatureFailures > 0) notes.push(`${receiver.progress.signatureFailures} webhook signatures failed`);
  if (receiverEvents.unidentified > 0) notes.push(`${receiverEvents.unidentified} webhooks named no recipient`);
  return notes;
}
