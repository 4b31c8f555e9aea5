import { SmppTransport } from '../../../src/transports/smpp/index.js';
import { TestSmsc, type SubmitReply } from '../../support/smsc/test-smsc.js';
import { describeTransportConformance, type PeerSubmitOutcome } from '../conformance.js';
import { smppConfig } from './helpers.js';

const REPLIES: Record<PeerSubmitOutcome, SubmitReply> = {
  accept: { kind: 'ok' },
  temporary: { kind: 'status', commandStatus: 0x58 }, // ESME_RTHROTTLED
  permanent: { kind: 'status', commandStatus: 0x0b }, // ESME_RINVDSTADR
  'no-response': { kind: 'never' },
};

describeTransportConformance('smpp', async () => {
  let mode: PeerSubmitOutcome = 'accept';
  const smsc = await TestSmsc.start({ onSubmit: () => REPLIES[mode] });
  // A response timeout far beyond the suite's bounds: a pending submit can only end by the
  // link closing or stop(), never by timing out (which would hide a hang at close).
  const transport = new SmppTransport(smppConfig(smsc, { responseTimeoutMs: 60_000 }));
  return {
    transport,
    peer: {
      nextSubmit(outcome) {
        mode = outcome;
      },
      async sendReceipt(messageId, status) {
        await smsc.sendReceipt(messageId, { stat: status });
      },
      submitsReceived: () => smsc.submitCount,
      async closeLink() {
        smsc.dropConnections();
      },
    },
    close: () => smsc.stop(),
  };
});
