/** The messages between the e2e bench and its sink processes (sink-process.ts, sinks.ts). */

export interface SmscSinkConfig {
  /** Wait before a part's receipt is first offered (the sink: 100 ms). */
  receiptDelayMs: number;
  /** deliver_sm awaiting their deliver_sm_resp at once. */
  receiptWindow: number;
  /** Destinations ending in this get an UNDELIV receipt, the rest DELIVRD. */
  undeliveredSuffix: string;
}

export interface ReceiverSinkConfig {
  /** smsgate signs webhooks (a bad signature is answered 401 and counted); Kannel does not: null. */
  secret: string | null;
}

export interface SinkProgress {
  /** SMPP sessions bound now (SMSC). */
  boundSessions: number;
  submitted: number;
  receiptsAcknowledged: number;
  webhooksAcknowledged: number;
  signatureFailures: number;
}

/** All times are monoMs() (CLOCK_MONOTONIC, ms), comparable across the processes of the run. */
export interface SmscEvents {
  submittedAtMs: number[];
  /** When each receipt's deliver_sm_resp (status 0) arrived, with the receipt's recipient. */
  acknowledgedAtMs: number[];
  acknowledgedRecipients: string[];
}

export interface ReceiverEvents {
  /** When each 2xx was answered, with the recipient the webhook was about. */
  acknowledgedAtMs: number[];
  acknowledgedRecipients: string[];
  /** 2xx answered to a request naming no recipient (should stay 0). */
  unidentified: number;
}

export type SinkRequest = { kind: 'collect' } | { kind: 'stop' };

export type SinkMessage =
  | { kind: 'listening'; host: string; port: number; url: string }
  | { kind: 'progress'; progress: SinkProgress }
  | { kind: 'events'; smsc?: SmscEvents; receiver?: ReceiverEvents };
