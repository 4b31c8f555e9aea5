/**
 * The SMPP server's port (SMPP 3.4, the SMSC side): accepts customer connections over TCP, or
 * TLS when `smppServer.tls` names a certificate and key, and keeps this node's sessions
 * (server-connection.ts does the protocol of each). It knows nothing of accounts, campaigns or
 * the store: every decision is the handlers' (ServerHandlers), the seam to the services.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { GatewayError } from '../../common/errors.js';
import type { Logger } from '../../common/log.js';
import { commandStatusInfo } from '../../transports/smpp/command-status.js';
import {
  receivesDeliveries,
  type DeliveringSession,
  type LocalSessions,
  type ServerHandlers,
  type ServerSessionInfo,
  type ServerSessionView,
  type SmppServerConfig,
  type SubmitCount,
} from '../contracts.js';
import { ServerConnection, type ConnectionEvents } from './server-connection.js';

export interface SmppListenerOptions {
  config: SmppServerConfig;
  handlers: ServerHandlers;
  logger: Logger;
  /** This node's id, as ServerSessionView.nodeId. */
  nodeId: string;
  now?: () => number;
}

export interface SmppListener extends LocalSessions {
  readonly address: { host: string; port: number };
  /** This node's bound sessions. */
  views(): ServerSessionView[];
  /** submit_sm answered since start, by account and status name. */
  submitCounts(): SubmitCount[];
  /** Stops listening and unbinds every session (each given at most ~2 s for unbind_resp). */
  close(): Promise<void>;
}

/** Starts listening on config.host:config.port; rejects with CONFIG_INVALID naming the key at fault. */
export async function startSmppListener(options: SmppListenerOptions): Promise<SmppListener> {
  const { config, handlers, nodeId } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: 'smpp-server' });
  const tlsFiles = config.tls === undefined ? undefined : await readTlsFiles(config.tls);

  const connections = new Set<ServerConnection>();
  const receiverListeners: Array<(session: ServerSessionInfo) => void> = [];
  const counts = new Map<string, SubmitCount>();
  let closing = false;

  const events: ConnectionEvents = {
    bound(connection) {
      const info = connection.session?.info;
      if (info === undefined || !receivesDeliveries(info.bindType)) return;
      for (const listener of receiverListeners) {
        try {
          listener(info);
        } catch (err) {
          logger.error({ err }, 'onReceiverBound listener failed');
        }
      }
    },
    closed(connection) {
      connections.delete(connection);
    },
    submitAnswered(systemId, commandStatus) {
      const status = commandStatusInfo(commandStatus).name;
      const key = `${systemId}\u0000${status}`;
      const count = counts.get(key);
      if (count === undefined) counts.set(key, { systemId, status, count: 1 });
      else count.count++;
    },
  };

  const onSocket = (socket: Socket): void => {
    if (closing) {
      socket.destroy();
      return;
    }
    connections.add(new ServerConnection({ socket, config, handlers, logger, now, events }));
  };

  let server: Server;
  try {
    server = tlsFiles === undefined ? createTcpServer(onSocket) : createTlsServer({ cert: tlsFiles.cert, key: tlsFiles.key }, onSocket);
  } catch (err) {
    // node:tls refuses a certificate or key it cannot parse, or a key that does not match.
    throw new GatewayError('CONFIG_INVALID', `smppServer.tls: the certificate and key cannot be used: ${errorText(err)}`, {
      details: { key: 'smppServer.tls' },
      cause: err,
    });
  }
  server.on('tlsClientError', (err: Error, socket: Socket) => {
    logger.info({ err: err.message, remoteAddress: socket.remoteAddress }, 'TLS handshake with a customer failed');
  });
  await listen(server, config);
  server.on('error', (err) => logger.error({ err }, 'smpp server listener error'));
  const bound = server.address() as AddressInfo;
  const address = { host: bound.address, port: bound.port };
  logger.info({ ...address, tls: tlsFiles !== undefined }, 'smpp server listening');

  const boundConnections = function* (): Generator<{ connection: ServerConnection; session: NonNullable<ServerConnection['session']> }> {
    for (const connection of connections) {
      const session = connection.session;
      if (session !== null) yield { connection, session };
    }
  };

  return {
    address,
    receiversOf(accountId: number): readonly DeliveringSession[] {
      const found: DeliveringSession[] = [];
      for (const { session } of boundConnections()) {
        if (session.info.account.id === accountId && receivesDeliveries(session.info.bindType)) found.push(session.delivering);
      }
      return found;
    },
    accountsWithReceivers(): readonly number[] {
      const accounts = new Set<number>();
      for (const { session } of boundConnections()) if (receivesDeliveries(session.info.bindType)) accounts.add(session.info.account.id);
      return [...accounts];
    },
    onReceiverBound(listener) {
      receiverListeners.push(listener);
    },
    views(): ServerSessionView[] {
      const nowMs = now();
      return [...boundConnections()].map(({ connection, session }) => ({
        sessionId: session.info.sessionId,
        systemId: session.info.account.systemId,
        bindType: session.info.bindType,
        address: session.info.remoteAddress,
        nodeId,
        boundAt: session.boundAtMs,
        windowInUse: connection.windowInUse,
        windowSize: config.windowSize,
        submitsPerSecond: session.submitRate.perSecond(nowMs),
      }));
    },
    submitCounts(): SubmitCount[] {
      return [...counts.values()].map((count) => ({ ...count }));
    },
    async close(): Promise<void> {
      if (closing) return;
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...connections].map((connection) => connection.unbindAndClose()));
      await stopped;
      logger.info('smpp server stopped');
    },
  };
}

async function readTlsFiles(tls: NonNullable<SmppServerConfig['tls']>): Promise<{ cert: Buffer; key: Buffer }> {
  const read = async (key: 'certFile' | 'keyFile'): Promise<Buffer> => {
    const path = tls[key];
    try {
      return await readFile(path);
    } catch (err) {
      throw new GatewayError('CONFIG_INVALID', `smppServer.tls.${key}: cannot read ${path}: ${errorText(err)}`, {
        details: { key: `smppServer.tls.${key}`, path },
        cause: err,
      });
    }
  };
  return { cert: await read('certFile'), key: await read('keyFile') };
}

function listen(server: Server, config: SmppServerConfig): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(new GatewayError('CONFIG_INVALID', `smppServer: cannot listen on ${config.host}:${config.port}: ${err.message}`, {
        details: { key: 'smppServer.port', host: config.host, port: config.port },
        cause: err,
      }));
    };
    server.once('error', onError);
    server.listen(config.port, config.host, () => {
      server.removeListener('error', onError);
      resolve();
    });
  });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
