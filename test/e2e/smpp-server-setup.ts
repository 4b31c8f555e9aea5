/**
 * What the SMPP server's end-to-end tests share: a real `smsgate serve` (SQLite, or one node of a
 * PostgreSQL cluster) with the `smppServer` section on a free port, routing everything to a test
 * SMSC; clients, senders, SMPP accounts, credits and rates set up through the product's own
 * commands (`smsgate migrate`, `client create`, `sender add`, `smpp-account add`, `credits set`,
 * `client set-rate`) before it starts; and a customer's view of the upstream submits.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { smsgateCli } from '../support/cluster-nodes.js';
import { freePort } from '../support/free-port.js';
import { GatewayProcess, writeGatewayConfig } from '../support/gateway-process.js';
import { pollUntil, portAccepts } from '../support/poll-until.js';
import type { EsmeBindType, PerlEsme, PerlEsmeOptions } from '../support/perl-esme/perl-esme.js';
import type { EsmeSubmit } from '../support/perl-esme/customer-cut.js';
import { TLV_TAG } from '../support/smsc/pdu-framer.js';
import type { RecordedSubmit } from '../support/smsc/test-smsc.js';
import { gatewayConfig } from './e2e-setup.js';

/** The sender every client here may use (type 0: registered with the regulator). */
export const SENDER = 'Shop';

export interface SmppClientSeed {
  name: string;
  /** `smsgate credits set` (a paying client); absent: unlimited. */
  credits?: number;
  /** `smsgate client set-rate --parts-per-second`; absent: no cap. */
  partsPerSecond?: number;
}

export interface SmppAccountSeed {
  client: string;
  systemId: string;
  /** SMPP passwords are 8 octets at most (SMPP 3.4 §5.2.2). */
  password: string;
  maxBinds?: number;
}

export type GatewayDatabase = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; keyFile: string };

/** One gateway's config: the e2e defaults, the database, and the SMPP server on its own port. */
export function smppServerConfig(
  dir: string,
  smsc: { host: string; port: number },
  smppPort: number,
  database: GatewayDatabase,
  transport: { binds?: number } = {},
): Record<string, unknown> {
  const base = gatewayConfig(dir, smsc);
  const transports = (base['transports'] as Record<string, unknown>[]).map((t) => ({ ...t, ...(transport.binds === undefined ? {} : { binds: transport.binds }) }));
  return {
    ...base,
    database: database.kind === 'sqlite' ? { path: database.path } : { url: database.url, keyFile: database.keyFile },
    transports,
    smppServer: { host: '127.0.0.1', port: smppPort, windowSize: 100, receiptRetentionHours: 72 },
  };
}

/** Migrates, then writes the clients (each with the sender), their credits and rates, and the SMPP accounts, with smsgate's commands. */
export async function seedSmppCustomers(configPath: string, clients: readonly SmppClientSeed[], accounts: readonly SmppAccountSeed[]): Promise<void> {
  await smsgateCli(configPath, 'migrate');
  for (const client of clients) {
    await smsgateCli(configPath, 'client', 'create', '--name', client.name);
    await smsgateCli(configPath, 'sender', 'add', '--client', client.name, '--sender', SENDER, '--type', '0');
    if (client.credits !== undefined) await smsgateCli(configPath, 'credits', 'set', '--client', client.name, '--credits', String(client.credits));
    if (client.partsPerSecond !== undefined) await smsgateCli(configPath, 'client', 'set-rate', '--name', client.name, '--parts-per-second', String(client.partsPerSecond));
  }
  for (const account of accounts) {
    await smsgateCli(configPath, 'smpp-account', 'add', '--client', account.client, '--system-id', account.systemId, '--password', account.password,
      ...(account.maxBinds === undefined ? [] : ['--max-binds', String(account.maxBinds)]));
  }
}

/** A gateway with its SMPP server: spawned, and waited for until the SMPP port accepts. */
export class SmppServerGateway {
  private gateway: GatewayProcess | undefined;

  constructor(
    readonly configPath: string,
    readonly smppPort: number,
  ) {}

  /** Writes the config for a fresh SQLite gateway in dir (its SMPP port chosen free). */
  static async sqlite(dir: string, smsc: { host: string; port: number }): Promise<{ gateway: SmppServerGateway; databasePath: string }> {
    const databasePath = join(dir, 'smsgate.sqlite');
    return { gateway: await SmppServerGateway.write(dir, smsc, { kind: 'sqlite', path: databasePath }), databasePath };
  }

  /** Writes the config of a gateway (a node, on PostgreSQL) in dir, its SMPP port chosen free. */
  static async write(dir: string, smsc: { host: string; port: number }, database: GatewayDatabase, transport: { binds?: number } = {}): Promise<SmppServerGateway> {
    const smppPort = await freePort();
    const { path } = writeGatewayConfig(dir, smppServerConfig(dir, smsc, smppPort, database, transport));
    return new SmppServerGateway(path, smppPort);
  }

  async start(): Promise<void> {
    this.gateway = await GatewayProcess.spawn(this.configPath);
    await waitForPort(this.smppPort, 20_000, () => this.running.logLines.slice(-20).join('\n'));
  }

  get running(): GatewayProcess {
    if (this.gateway === undefined) throw new Error('the gateway was never started');
    return this.gateway;
  }

  get pid(): number {
    return this.running.pid;
  }

  /** Options for a Perl ESME binding to this gateway's SMPP server. */
  esme(bind: EsmeBindType, account: Pick<SmppAccountSeed, 'systemId' | 'password'>): PerlEsmeOptions {
    return { host: '127.0.0.1', port: this.smppPort, bind, systemId: account.systemId, password: account.password };
  }

  /** SIGKILL and its exit. */
  async kill(): Promise<void> {
    const gateway = this.gateway;
    if (gateway === undefined) return;
    gateway.kill('SIGKILL');
    await gateway.waitForExit();
  }

  async stop(): Promise<void> {
    if (this.gateway !== undefined) await this.gateway.stop();
  }
}

export async function waitForPort(port: number, timeoutMs: number, context: () => string): Promise<void> {
  await pollUntil(() => portAccepts(port), timeoutMs,
    () => `connections on the SMPP server's port ${port} (is the smppServer section wired?):\n${context()}`, 50);
}

/** The octets a part's text went in: message_payload when sent, else short_message (a UDH included). */
export function bodyOctets(submit: Pick<EsmeSubmit, 'short_message' | 'message_payload'>): string {
  return submit.message_payload ?? submit.short_message ?? '';
}

/** The same read of a submit_sm as the upstream SMSC received it. */
export function upstreamBodyOctets(submit: RecordedSubmit): string {
  return (submit.wire.tlvs.get(TLV_TAG.message_payload) ?? submit.wire.short_message).toString('hex');
}

/** The SAR TLVs of an upstream submit, when sent. */
export function upstreamSar(submit: RecordedSubmit): [number, number, number] | undefined {
  const ref = submit.wire.tlvs.get(TLV_TAG.sar_msg_ref_num);
  const total = submit.wire.tlvs.get(TLV_TAG.sar_total_segments);
  const seq = submit.wire.tlvs.get(TLV_TAG.sar_segment_seqnum);
  if (ref === undefined || total === undefined || seq === undefined) return undefined;
  return [ref.readUInt16BE(0), total.readUInt8(0), seq.readUInt8(0)];
}

/**
 * The parts of one message arrived upstream as the customer cut them, once each: the same
 * number of submits, and (in any order) each one's UDHI bit, data_coding, octets (UDH included, or
 * message_payload) and SAR TLVs.
 */
export function expectCutCarried(upstream: readonly RecordedSubmit[], parts: readonly EsmeSubmit[]): void {
  const key = (udhi: number, dataCoding: number | undefined, body: string, sar: readonly number[] | undefined): string =>
    JSON.stringify([udhi, dataCoding ?? 0, body, sar ?? null]);
  expect(upstream.map((s) => key(s.wire.esm_class & 0x40, s.wire.data_coding, upstreamBodyOctets(s), upstreamSar(s))).sort())
    .toEqual(parts.map((p) => key((p.esm_class ?? 0) & 0x40, p.data_coding, bodyOctets(p), p.sar)).sort());
}

/**
 * The customer has exactly one receipt for each of its messages (each acknowledged at once, so
 * none is sent twice), read as SMPP 3.4 Appendix B and §5.3.2.12 / §5.3.2.35 say: esm_class
 * 0x04, `id:` equal to receipted_message_id and to the message id of the submit_sm_resp, stat
 * DELIVRD, message_state DELIVERED (2).
 */
export function expectOneReceiptEach(esme: PerlEsme, messageIds: ReadonlySet<string>): void {
  const receipts = esme.receipts();
  expect(receipts.map((r) => r.id).sort()).toEqual([...messageIds].sort());
  for (const receipt of receipts) {
    expect(receipt.delivery.esmClass).toBe(0x04);
    expect(receipt.delivery.answered).toBe(0);
    expect(receipt.stat).toBe('DELIVRD');
    expect(receipt.receiptedMessageId).toBe(receipt.id);
    expect(receipt.messageState).toBe(2);
  }
}
