import { SimulatorTransport, type ForcedOutcome } from '../../../src/transports/simulator/index.js';
import { describeTransportConformance, type PeerSubmitOutcome } from '../conformance.js';

const FORCED: Readonly<Record<PeerSubmitOutcome, ForcedOutcome>> = {
  accept: 'accept',
  temporary: 'temporary',
  permanent: 'reject',
  'no-response': 'hold',
};

describeTransportConformance('simulator', async () => {
  // Receipts only when the suite asks for them: the automatic ones are an hour away.
  const transport = new SimulatorTransport({ name: 'sim', type: 'simulator', receiptDelayMs: 3_600_000 });
  return {
    transport,
    peer: {
      nextSubmit: (outcome) => transport.forceOutcome(FORCED[outcome]),
      sendReceipt: (messageId, status) => transport.reportReceipt({ messageId, status }),
    },
    close: async () => undefined,
  };
});
