import { SimulatorTransport, type ForcedOutcome } from '../../../src/transports/simulator/index.js';
import type { OutboundMessage, PartOutcome, Transport } from '../../../src/transports/transport.js';
import { describeTransportConformance, type PeerSubmitOutcome } from '../conformance.js';

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
  const transport: Transport = {
    name: simulator.name,
    type: simulator.type,
    windowSize: simulator.windowSize,
    maxPerSecond: simulator.maxPerSecond,
    setHandlers: (handlers) => simulator.setHandlers(handlers),
    start: () => simulator.start(),
    stop: (drainTimeoutMs) => simulator.stop(drainTimeoutMs),
    currentState: () => simulator.currentState(),
    submit(message: OutboundMessage): Promise<PartOutcome[]> {
      submitsReceived++;
      return simulator.submit(message);
    },
  };
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
