/**
 * The listeners `serve` opens (the API on api.host:api.port, the admin listener on
 * admin.host:admin.port, the SMPP server on smppServer.host:smppServer.port), named by their
 * config keys when one cannot be opened: `config check` tries each before `serve` would, and
 * `serve` words its own failure the same way (`api.port 8080 is in use (api.host 127.0.0.1)`).
 */
import { createServer } from 'node:net';
import type { SmsGateConfig } from '../gateway/config.js';

/** A listener of the config: its section (`api`, `admin`, `smppServer`) and where it listens. */
export interface ConfiguredListener {
  section: 'api' | 'admin' | 'smppServer';
  host: string;
  port: number;
}

export function configuredListeners(config: SmsGateConfig): ConfiguredListener[] {
  const listeners: ConfiguredListener[] = [{ section: 'api', host: config.api.host, port: config.api.port }];
  if (config.admin !== undefined) listeners.push({ section: 'admin', host: config.admin.host, port: config.admin.port });
  if (config.smppServer !== undefined) listeners.push({ section: 'smppServer', host: config.smppServer.host, port: config.smppServer.port });
  return listeners;
}

/** What a listen failure means for the operator, by the config keys that chose the address. */
export function listenFailureText(listener: ConfiguredListener, code: string | undefined): string {
  const { section, host, port } = listener;
  switch (code) {
    case 'EADDRINUSE':
      return `${section}.port ${port} is in use (${section}.host ${host})`;
    case 'EACCES':
      return `${section}.port ${port} needs privileges this user lacks (${section}.host ${host}): choose a port above 1023`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${section}.host ${host} is not an address of this machine (${section}.port ${port})`;
    default:
      return `${section}.host ${host}, ${section}.port ${port}: cannot listen (${code ?? 'unknown error'})`;
  }
}

/** The error code of a failed listen(), or undefined when `err` is not one. */
export function listenErrorCode(err: unknown): string | undefined {
  const errno = err as NodeJS.ErrnoException | undefined;
  return errno?.syscall === 'listen' || errno?.syscall === 'getaddrinfo' ? errno.code : undefined;
}

/** Opens and at once closes the listener's address; null when it could be opened (port 0 always can). */
export function tryListen(listener: ConfiguredListener): Promise<string | null> {
  if (listener.port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(listenFailureText(listener, err.code)));
    server.listen({ host: listener.host, port: listener.port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}
