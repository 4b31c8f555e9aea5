/**
 * The SMPP server for customers (ESMEs binding to smsgate, SMPP 3.4): what the composition root
 * (src/gateway/) uses. The parts' shared types are in ./contracts.ts; the lifecycle that runs them
 * together is ./smpp-server.ts. docs/behaviour/smpp-server.md says how it behaves.
 */
export * from './contracts.js';
export {
  LocalSessionsRelay,
  SmppServer,
  type SmppBindGateLike,
  type SmppDeliverySenderLike,
  type SmppListenerLike,
  type SmppServerParts,
  type SmppServerStatusStore,
} from './smpp-server.js';
