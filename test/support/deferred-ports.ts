/**
 * Store ports that answer a turn of the event loop later, as a networked backend (PostgreSQL) does,
 * over the real SQLite ports. A consumer that forgot an await, or that counts on a store call
 * having finished before its next line, breaks on these and not on SQLite's immediate answers.
 * The work itself is SQLite's, in full: only when it runs moves.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { StorePorts } from '../../src/store/store-ports.js';

function deferred<T extends object>(port: T, calls: { count: number }): T {
  return new Proxy(port, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await nextTurn();
        calls.count += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** `calls.count` counts the store calls made through the returned ports. */
export function deferredPorts(ports: StorePorts, calls: { count: number } = { count: 0 }): StorePorts {
  return {
    auth: deferred(ports.auth, calls),
    campaigns: deferred(ports.campaigns, calls),
    campaignRequests: deferred(ports.campaignRequests, calls),
    inbound: deferred(ports.inbound, calls),
    undecodable: deferred(ports.undecodable, calls),
    admin: deferred(ports.admin, calls),
    status: deferred(ports.status, calls),
    webhooks: deferred(ports.webhooks, calls),
    credits: deferred(ports.credits, calls),
    idempotency: deferred(ports.idempotency, calls),
    smppAccounts: deferred(ports.smppAccounts, calls),
    smppSessions: deferred(ports.smppSessions, calls),
  };
}
