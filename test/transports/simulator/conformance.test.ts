import { SimulatorTransport, type ForcedOutcome } from '../../../src/transports/simulator/index.js';
import { describeTransportConformance, withSubmit, type PeerSubmitOutcome } from '../conformance.js';

const FORCED: Readonly<Record<PeerSubmitOutcome, ForcedOutcome>> = {
  accept: 'accept',
  temporary: 'temporary',
  permanent: 'reject',
  'no-response': 'hold',
};

describeTransportConformance('simulator', async () => {
  // Receipts only when the suite asks for them: the automatic ones are an hour away.
  const simulator = new SimulatorTransport({ name: 'sim', type: 'simulator', receiptDelayMs: 3_600_000 });
  // The simulator is its own peer: a part is "read" once submit() has it (a held part waits
  // inside submit() from its first turn), so the suite's calls are counted here.
  let submitsReceived = 0;
  const transport = withSubmit(simulator, (message) => {
    submitsReceived++;
    return simulator.submit(message);
  });
  return {
    transport,
    peer: {
      nextSubmit: (outcome) => simulator.forceOutcome(FORCED[outcome]),
      sendReceipt: (messageId, status) => simulator.reportReceipt({ messageId, status }),
      submitsReceived: () => submitsReceived,
      // The simulator has no link of its own: the peer going away is the simulator stopping.
      closeLink: () => simulator.stop(0),
    },
    close: async () => undefined,
  };
});
