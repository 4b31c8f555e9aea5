/**
 * submit_sm_resp is sent only once the message is durable (docs/behaviour/smpp-server.md): a
 * Perl Net::SMPP customer submits while the link to the SMSC is cut (so nothing can go upstream
 * before the kill), smsgate is killed with SIGKILL right after the submit_sm_resp, the link comes
 * back, smsgate restarts on the same SQLite file, and the message goes upstream, once.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { cutMessage } from '../support/perl-esme/customer-cut.js';
import { PerlEsme } from '../support/perl-esme/perl-esme.js';
import { TestSmsc } from '../support/smsc/test-smsc.js';
import { TcpRelay } from '../support/tcp-relay.js';
import { tempDir, until } from './e2e-setup.js';
import { seedSmppCustomers, SENDER, SmppServerGateway, type SmppAccountSeed } from './smpp-server-setup.js';

const ACCOUNT: SmppAccountSeed = { client: 'acme', systemId: 'durable', password: 'dura-pw' };
const DESTINATION = '447700901501';

let dir: string | undefined;
const stops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 of smsgate right after a submit_sm_resp', () => {
  it('still sends the message upstream after the restart', async () => {
    dir = tempDir('smpp-server-kill');
    const smsc = await TestSmsc.start();
    stops.push(() => smsc.stop());
    // The gateway reaches the SMSC through a relay the test can cut.
    const relay = await TcpRelay.start(smsc.address.host, smsc.address.port);
    stops.push(() => relay.close());
    const { gateway } = await SmppServerGateway.sqlite(dir, { host: '127.0.0.1', port: relay.port });
    stops.push(() => gateway.kill());
    await seedSmppCustomers(gateway.configPath, [{ name: 'acme' }], [ACCOUNT]);
    await gateway.start();
    await until(() => smsc.boundSessions().length, (n) => n > 0, 20_000, 'the gateway bound to the SMSC');

    relay.cut();
    const esme = await PerlEsme.bind(gateway.esme('transmitter', ACCOUNT));
    stops.push(() => esme.stop());
    const [resp] = await esme.submitAll(cutMessage({ text: 'Survive the kill', scheme: 'single', dataCoding: 0, source: SENDER, destination: DESTINATION }));
    await gateway.kill();
    expect(resp!.status).toBe(0);
    expect(resp!.messageId).not.toBe('');
    // Nothing could leave before the kill: the link was cut.
    expect(smsc.submits.filter((s) => s.wire.destination_addr === DESTINATION)).toHaveLength(0);

    relay.restore();
    await gateway.start();
    await until(() => smsc.submits.filter((s) => s.wire.destination_addr === DESTINATION && s.messageId !== undefined).length, (n) => n >= 1, 30_000, 'the message upstream');
    expect(smsc.submits.filter((s) => s.wire.destination_addr === DESTINATION)).toHaveLength(1);
    expect(smsc.submits.find((s) => s.wire.destination_addr === DESTINATION)?.wire.short_message.toString('latin1')).toBe('Survive the kill');
  }, 90_000);
});
