/**
 * smsgate's SMPP server on a two-node PostgreSQL cluster, each node serving its own SMPP port,
 * with Perl Net::SMPP customers (docs/behaviour/smpp-server.md, "Cluster"):
 * - the carrier's one bind is held by one node (A); a customer submits on A, its receipts come
 *   in from the SMSC on A, and reach the same customer bound as a receiver on the other node (B);
 * - an account's --max-binds 1 holds across both nodes: bound on A, a bind on B is refused
 *   with ESME_RALYBND.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_STATUS } from '../../src/smpp-server/contracts.js';
import { localPortsTo } from '../support/cluster-nodes.js';
import { cutMessage } from '../support/perl-esme/customer-cut.js';
import { PerlEsme } from '../support/perl-esme/perl-esme.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { TestSmsc } from '../support/smsc/test-smsc.js';
import { tempDir, until } from './e2e-setup.js';
import { seedSmppCustomers, SENDER, SmppServerGateway, type SmppAccountSeed } from './smpp-server-setup.js';

const ESME_RALYBND = SERVER_STATUS.alreadyBound;
const ROAMING: SmppAccountSeed = { client: 'acme', systemId: 'roaming', password: 'roam-pw' };
const SINGLE: SmppAccountSeed = { client: 'acme', systemId: 'single', password: 'one-pw', maxBinds: 1 };

let dir: string;
let postgres: PostgresServer;
let smsc: TestSmsc;
const nodes: SmppServerGateway[] = [];
const esmes: PerlEsme[] = [];

beforeAll(async () => {
  dir = tempDir('smpp-server-cluster');
  postgres = await startPostgres();
  smsc = await TestSmsc.start();
  const database = { kind: 'postgres', url: await postgres.createDatabase(), keyFile: join(dir, 'smsgate.key') } as const;
  for (const index of [0, 1]) {
    const nodeDir = join(dir, `node-${index}`);
    mkdirSync(nodeDir);
    // One bind to the carrier for the whole cluster: exactly one node takes the SMSC's receipts.
    nodes.push(await SmppServerGateway.write(nodeDir, smsc.address, database, { binds: 1 }));
  }
  await seedSmppCustomers(nodes[0]!.configPath, [{ name: 'acme' }], [ROAMING, SINGLE]);
  for (const node of nodes) await node.start();
}, 120_000);

afterAll(async () => {
  for (const esme of esmes) await esme.stop();
  for (const node of nodes) await node.stop();
  await smsc?.stop();
  await postgres?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function bindOn(node: SmppServerGateway, bind: 'transmitter' | 'receiver' | 'transceiver', account: SmppAccountSeed): Promise<PerlEsme> {
  const esme = await PerlEsme.connect(node.esme(bind, account));
  esmes.push(esme);
  return esme;
}

describe('smsgate SMPP server on a two-node PostgreSQL cluster', () => {
  it('delivers the receipts of messages submitted on node A to the customer bound on node B', async () => {
    const [bound] = await until(() => smsc.boundSessions(), (sessions) => sessions.length === 1, 20_000, 'the cluster bound to the SMSC');
    // The node whose connection is the bound session: its local port is the session's remote port.
    const boundPort = smsc.socketOf(bound!.id).remotePort;
    const holder = nodes.findIndex((node) => localPortsTo(node.pid, smsc.address.port).includes(boundPort ?? -1));
    expect(holder).toBeGreaterThanOrEqual(0);
    const nodeA = nodes[holder]!;
    const nodeB = nodes[1 - holder]!;

    const receiver = await bindOn(nodeB, 'receiver', ROAMING);
    expect(receiver.bindStatus).toBe(0);
    const transmitter = await bindOn(nodeA, 'transmitter', ROAMING);
    expect(transmitter.bindStatus).toBe(0);
    const destinations = ['447700901701', '447700901702', '447700901703'];
    const resps = await transmitter.submitAll(destinations.flatMap((destination) => cutMessage({ text: 'Across the cluster', scheme: 'single', dataCoding: 0, source: SENDER, destination })));
    expect(resps.every((r) => r.status === 0)).toBe(true);

    const upstream = () => smsc.submits.filter((s) => destinations.includes(s.wire.destination_addr) && s.messageId !== undefined);
    await until(() => upstream().length, (n) => n >= destinations.length, 20_000, 'the submits upstream');
    expect(upstream()).toHaveLength(destinations.length);
    // The SMSC's receipts arrive on node A, the only node bound to it.
    const statuses = await Promise.all(upstream().map((s) => smsc.sendReceipt(s.messageId as string, { stat: 'DELIVRD', tlvs: true }, s.wire.destination_addr)));
    expect(statuses).toEqual(destinations.map(() => 0));

    await receiver.waitUntil(() => receiver.acknowledgedReceiptIds().size >= destinations.length, 30_000, 'the receipts on node B');
    expect(receiver.acknowledgedReceiptIds()).toEqual(new Set(resps.map((r) => r.messageId)));
    expect(receiver.receipts().every((r) => r.stat === 'DELIVRD' && r.delivery.esmClass === 0x04)).toBe(true);
  }, 90_000);

  it('holds --max-binds 1 across both nodes', async () => {
    const [nodeA, nodeB] = nodes as [SmppServerGateway, SmppServerGateway];
    const first = await bindOn(nodeA, 'transceiver', SINGLE);
    expect(first.bindStatus).toBe(0);
    expect((await bindOn(nodeB, 'transceiver', SINGLE)).bindStatus).toBe(ESME_RALYBND);
    expect((await bindOn(nodeA, 'receiver', SINGLE)).bindStatus).toBe(ESME_RALYBND);
  }, 30_000);
});
