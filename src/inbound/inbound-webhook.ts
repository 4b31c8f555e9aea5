/**
 * The inbound-message webhook body: exactly
 * {"MessageId","From","To","Text","ReceivedAt"} in that order, ReceivedAt an ISO-8601 UTC instant,
 * plus "Incomplete": true only when parts never arrived. Serialised once and stored, so every
 * attempt, replay and redrive sends and signs the same bytes.
 */
export interface InboundWebhookEvent {
  messageId: string;
  from: string;
  to: string;
  text: string;
  receivedAtMs: number;
  incomplete: boolean;
}

export function serializeInboundWebhook(event: InboundWebhookEvent): string {
  const body: Record<string, string | boolean> = {
    MessageId: event.messageId,
    From: event.from,
    To: event.to,
    Text: event.text,
    ReceivedAt: new Date(event.receivedAtMs).toISOString(),
  };
  if (event.incomplete) body['Incomplete'] = true;
  return JSON.stringify(body);
}
