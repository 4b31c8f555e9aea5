/**
 * The shared transport conformance suite against ModemTransport driving the emulated modem over
 * a socat pty. The peer hooks map onto the emulator: refusals are +CMS ERROR 42 (congestion,
 * temporary) and 1 (unassigned number, permanent); receipts are SMS-STATUS-REPORTs with TP-ST
 * 0x00 (DELIVRD) or 0x40 (UNDELIV), sent for the TP-MR the emulator gave that part.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModemTransport } from '../../../src/transports/modem/index.js';
import type { OutboundMessage, PartOutcome } from '../../../src/transports/transport.js';
import { ModemEmulator } from '../../support/modem-emulator/index.js';
import { describeTransportConformance, withSubmit } from '../conformance.js';

/** TS 23.040 §9.2.3.15: 0x00 received by the SME; 0x40 remote procedure error (permanent). */
const TP_ST = { DELIVRD: 0x00, UNDELIV: 0x40 } as const;

describeTransportConformance('modem', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-conformance-'));
  const emulator = new ModemEmulator({ dir, name: 'conf0', statusReports: false });
  await emulator.plugIn();
  const modems = new ModemTransport(
    {
      name: 'modems',
      type: 'modem',
      devices: [{ path: emulator.path, messagesPerMinute: 6000 }],
      retryDelayMs: 10,
      // The old inner retry's setting: the suite checks a temporary refusal is still sent once.
      maxAttemptsPerPart: 2,
      reopenBackoffMs: [100],
    },
    { registrationPollMs: 50 },
  );
  // Which emulator submit (TP-MR, recipient) each accepted messageId is: parts go out one at a
  // time on one device, so accepted outcomes in part order match the new received entries.
  const sentAs = new Map<string, { messageReference: number; recipient: string }>();
  const transport = withSubmit(modems, async (message: OutboundMessage): Promise<PartOutcome[]> => {
    const before = emulator.received.length;
    const outcomes = await modems.submit(message);
    const fresh = emulator.received.slice(before);
    const accepted = outcomes.filter((o) => o.kind === 'accepted').sort((a, b) => a.part - b.part);
    accepted.forEach((outcome, i) => {
      const sent = fresh[i];
      if (outcome.kind === 'accepted' && sent !== undefined) {
        sentAs.set(outcome.messageId, { messageReference: sent.messageReference, recipient: sent.pdu.destination.digits });
      }
    });
    return outcomes;
  });
  return {
    transport,
    peer: {
      nextSubmit: (outcome) => emulator.setSubmitMode(outcome),
      async sendReceipt(messageId, status) {
        const sent = sentAs.get(messageId);
        if (sent === undefined) throw new Error(`no submit recorded for ${messageId}`);
        emulator.reportStatus(sent.messageReference, sent.recipient, TP_ST[status]);
      },
      submitsReceived: () => emulator.submitPdusReceived,
      // socat killed mid AT+CMGS: the pty goes away under the modem transport.
      closeLink: () => emulator.unplug(),
    },
    async close() {
      const errors = [...emulator.protocolErrors];
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
      if (errors.length > 0) throw new Error(`emulator protocol errors: ${errors.join('; ')}`);
    },
  };
});
