/**
 * What the tests of `smsgate serve` children on PostgreSQL (database.url) share: one
 * throwaway PostgreSQL database, an SMSC, a webhook receiver, the serve config pointing at them
 * and an account seeded in the database, all started before the file's tests; the serve children
 * (SIGKILLed if still running), the receiver, the SMSC and the server stopped after them, also
 * when a test failed.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { GatewayProcess, seedPgAccount, writeGatewayConfig } from '../support/gateway-process.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { gatewayConfig, tempDir } from './e2e-setup.js';

/** The SMSC a test brings: anything with an SMPP address that can be stopped. */
export interface ServeSmsc {
  readonly address: { host: string; port: number };
  stop(): Promise<void>;
}

export interface PgServePeers<Smsc extends ServeSmsc> {
  readonly smsc: Smsc;
  readonly receiver: WebhookReceiver;
  /** The connection URL of the test's database (database.url in the config). */
  readonly url: string;
  /** The seeded admin's PAT, for client 'acme' with sender 'Shop'. */
  readonly token: string;
  /** Spawns `smsgate serve` on the config; killed after the file if it is still running. */
  spawn(): Promise<GatewayProcess>;
}

export interface PgServeOptions<Smsc extends ServeSmsc> {
  /** The receiver checks X-Signature with this secret, which the seeded client's webhook signs with. */
  webhookSecret: string;
  startSmsc(): Promise<Smsc>;
  /** The SMPP transport's limits (e2e-setup gatewayConfig) and its binds (default: the config's one). */
  transport: { window: number; maxPerSecond: number; binds?: number };
  /** Changes to the generated config before it is written (e.g. api limits). */
  configure?: (raw: Record<string, unknown>) => void;
}

export function usePgServePeers<Smsc extends ServeSmsc>(name: string, options: PgServeOptions<Smsc>): () => PgServePeers<Smsc> {
  let dir: string | undefined;
  let server: PostgresServer | undefined;
  let smsc: Smsc | undefined;
  let receiver: WebhookReceiver | undefined;
  let peers: PgServePeers<Smsc> | undefined;
  const gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    dir = tempDir(name);
    server = await startPostgres();
    const url = await server.createDatabase();
    smsc = await options.startSmsc();
    receiver = await WebhookReceiver.start({ secret: options.webhookSecret });
    const { binds, ...limits } = options.transport;
    const raw = gatewayConfig(dir, smsc.address, limits);
    raw['database'] = { url, keyFile: join(dir, 'cluster.key') };
    if (binds !== undefined) (raw['transports'] as Record<string, unknown>[])[0]!['binds'] = binds;
    options.configure?.(raw);
    const written = writeGatewayConfig(dir, raw);
    const account = await seedPgAccount(written.config, { webhookUrl: receiver.url, webhookSecret: options.webhookSecret, senders: [{ name: 'Shop', type: 0 }] });
    peers = {
      smsc,
      receiver,
      url,
      token: account.token,
      async spawn() {
        const gateway = await GatewayProcess.spawn(written.path);
        gateways.push(gateway);
        return gateway;
      },
    };
  }, 120_000);
  afterAll(async () => {
    for (const gateway of gateways) gateway.kill('SIGKILL');
    await Promise.all(gateways.map((gateway) => gateway.waitForExit()));
    await receiver?.close();
    await smsc?.stop();
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (peers === undefined) throw new Error('the PostgreSQL serve peers start in beforeAll');
    return peers;
  };
}
