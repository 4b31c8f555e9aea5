/**
 * Small recording stand-ins for the SMPP server's parts, for the tests of the seam that composes
 * them (SmppServer, the gateway's hook): a listener over a real loopback TCP server (so listening,
 * closing and a port in use are the kernel's answers) whose sessions and counts the test sets,
 * and a bind gate, a sender and status reads that record what they are asked.
 */
import { createServer, type Server } from 'node:net';
import { silentLogger, type Logger } from '../../../src/common/log.js';
import type { DeliveringSession, ServerSessionInfo, ServerSessionView, SubmitCount } from '../../../src/smpp-server/contracts.js';
import { LocalSessionsRelay, SmppServer, type SmppListenerLike, type SmppServerParts } from '../../../src/smpp-server/smpp-server.js';

export function sessionView(sessionId: string, systemId: string, extra: Partial<ServerSessionView> = {}): ServerSessionView {
  return { sessionId, systemId, bindType: 'transceiver', address: '127.0.0.1', nodeId: 'node-a', boundAt: 1_000, windowInUse: null, windowSize: 100, submitsPerSecond: null, ...extra };
}

export class FakeListener implements SmppListenerLike {
  sessions: ServerSessionView[] = [];
  counts: SubmitCount[] = [];
  private readonly boundListeners: ((session: ServerSessionInfo) => void)[] = [];

  constructor(
    private readonly server: Server,
    private readonly events: string[],
    private readonly onClose: () => void = () => undefined,
  ) {}

  receiversOf(): readonly DeliveringSession[] {
    return [];
  }

  accountsWithReceivers(): readonly number[] {
    return this.sessions.length === 0 ? [] : [7];
  }

  onReceiverBound(listener: (session: ServerSessionInfo) => void): void {
    this.boundListeners.push(listener);
  }

  /** A receiver-capable session bound (as the real listener reports it). */
  bind(session: ServerSessionInfo): void {
    for (const listener of this.boundListeners) listener(session);
  }

  views(): ServerSessionView[] {
    return this.sessions;
  }

  submitCounts(): readonly SubmitCount[] {
    return this.counts;
  }

  address(): { host: string; port: number } | undefined {
    const info = this.server.address();
    return info === null || typeof info === 'string' ? undefined : { host: info.address, port: info.port };
  }

  async close(): Promise<void> {
    this.events.push('listener.close');
    this.onClose();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.events.push('listener.closed');
  }
}

export interface FakeServerOptions {
  host?: string;
  port?: number;
  sessionStaleMs?: number;
  heartbeat?: (ids: readonly string[]) => Promise<void>;
  bindGateStart?: () => Promise<void>;
  /** The cluster's session rows the status store answers. */
  rows?: ServerSessionView[];
  waiting?: ReadonlyMap<string, number>;
  /** Called as the bind gate starts and as the listener closes (e.g. to look at the engine then). */
  onBindGateStart?: () => void;
  onListenerClose?: () => void;
  logger?: Logger;
}

export interface FakeServer {
  server: SmppServer;
  events: string[];
  heartbeats: string[][];
  relay: LocalSessionsRelay;
  listener(): FakeListener;
}

export function fakeSmppServer(options: FakeServerOptions = {}): FakeServer {
  const events: string[] = [];
  const heartbeats: string[][] = [];
  let listener: FakeListener | undefined;
  const relay = new LocalSessionsRelay();
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  const parts: SmppServerParts = {
    config: { host, port },
    async listen() {
      events.push('listener.listen');
      const tcp = createServer();
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, host, () => resolve());
      });
      listener = new FakeListener(tcp, events, options.onListenerClose);
      return listener;
    },
    bindGate: {
      async start() {
        events.push('bindGate.start');
        options.onBindGateStart?.();
        await options.bindGateStart?.();
      },
      async heartbeat(ids) {
        heartbeats.push([...ids]);
        await options.heartbeat?.(ids);
      },
    },
    sender: {
      start() {
        events.push('sender.start');
      },
      async stop() {
        events.push('sender.stop');
      },
    },
    sessions: relay,
    statusStore: {
      clusterSessions: () => Promise.resolve(options.rows ?? []),
      deliveriesWaiting: () => Promise.resolve(options.waiting ?? new Map([['acme', 3], ['idle', 0]])),
    },
    sessionStaleMs: options.sessionStaleMs ?? 90,
    logger: options.logger ?? silentLogger(),
  };
  const server = new SmppServer(parts);
  return {
    server,
    events,
    heartbeats,
    relay,
    listener: () => {
      if (listener === undefined) throw new Error('not listening');
      return listener;
    },
  };
}
