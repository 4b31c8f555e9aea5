/**
 * Modem series of /metrics and the status page's modem table, against the modem
 * emulator on a socat pty pair: signal as dBm (TS 27.007 §8.5: -113 + 2 * rssi), registration,
 * operator, and the link going down when the modem is unplugged.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusFacts } from '../../src/admin/status-facts.js';
import { createGateway, resolveConfigFromObject, type Gateway } from '../../src/index.js';
import { seedAccount, type SeededAccount } from '../support/gateway-process.js';
import { ModemEmulator } from '../support/modem-emulator/index.js';
import { baseUrlOf, getSummary, postCampaign, tempDir, until } from '../e2e/e2e-setup.js';
import { scrape } from './admin-fixture.js';

let dir: string;
let emulator: ModemEmulator;
let gateway: Gateway;
let adminUrl: string;
let account: SeededAccount;

beforeAll(async () => {
  dir = tempDir('modemmetrics');
  // rssi 21 is -113 + 42 = -71 dBm; registration stat 5 is roaming.
  emulator = new ModemEmulator({ dir, name: 'ttyEMU0', rssi: 21, operator: 'Emulated <Net>', registrationStat: 5 });
  await emulator.plugIn();
  const config = resolveConfigFromObject(
    {
      database: { path: join(dir, 'smsgate.sqlite') },
      api: { host: '127.0.0.1', port: 0 },
      logging: { level: 'silent' },
      transports: [{ name: 'modems', type: 'modem', devices: [{ path: emulator.path, name: 'sim1' }], reopenBackoffMs: [100, 200], registrationTimeoutMs: 5_000 }],
      admin: { host: '127.0.0.1', port: 0 },
    },
    'modem-metrics.json',
    {},
  );
  account = await seedAccount(config, { senders: [{ name: 'Modem', type: 0 }] });
  gateway = await createGateway(config);
  await gateway.start();
  const where = gateway.admin?.address();
  adminUrl = `http://${where?.host}:${where?.port}`;
});

afterAll(async () => {
  await gateway?.stop();
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('modem metrics', () => {
  it('exposes signal, registration and the link while the modem is up', async () => {
    const { series } = await until(() => scrape(adminUrl), (m) => m.series.get('smsgate_modem_signal_dbm{device="sim1"}') !== undefined, 15_000, 'the modem\'s first health poll');
    expect(series.get('smsgate_modem_signal_dbm{device="sim1"}')).toBe(-71);
    expect(series.get('smsgate_modem_registered{device="sim1"}')).toBe(1);
    expect(series.get('smsgate_transport_up{transport="modems",bind="sim1"}')).toBe(1);
    const facts = (await (await fetch(`${adminUrl}/status.json`)).json()) as StatusFacts;
    expect(facts.transports?.[0]?.links[0]).toMatchObject({
      name: 'sim1',
      state: 'bound',
      modem: { operator: 'Emulated <Net>', signalDbm: -71, registration: 'registered-roaming', registered: true, lastCmsError: null },
    });
    const page = await (await fetch(`${adminUrl}/status`)).text();
    expect(page).toContain('<td>Emulated &lt;Net&gt;</td>');
    expect(page).toContain('-71 dBm');
  });

  it('shows the last CMS error a submit got, and counts the permanent failure under its CMS error', async () => {
    // TS 27.005 §3.2.5: +CMS ERROR 1, unassigned number: a permanent failure.
    emulator.failNextSubmits(1);
    const { id } = await postCampaign(baseUrlOf(gateway), account.token, { text: 'CMS', from: 'Modem', recipientInfo: [{ msisdn: '353871230001' }] });
    await until(() => getSummary(baseUrlOf(gateway), account.token, id), (s) => s?.undelivered === 1, 15_000, 'the recipient undelivered');
    const facts = (await (await fetch(`${adminUrl}/status.json`)).json()) as StatusFacts;
    expect(facts.transports?.[0]?.links[0]?.modem?.lastCmsError).toBe('CMS_ERROR_1');
    const { series } = await scrape(adminUrl);
    expect(series.get('smsgate_part_outcomes_total{transport="modems",outcome="failed-permanent",reason="CMS_ERROR_1"}')).toBe(1);
    expect(series.get('smsgate_parts_submitted_total{transport="modems"}')).toBe(1);
    const page = await (await fetch(`${adminUrl}/status`)).text();
    expect(page).toContain('<td class="err">CMS_ERROR_1</td>');
  });

  it('shows the link down once the modem is unplugged', async () => {
    await emulator.unplug();
    const { series } = await until(() => scrape(adminUrl), (m) => m.series.get('smsgate_transport_up{transport="modems",bind="sim1"}') === 0, 15_000, 'the modem link down');
    expect(series.get('smsgate_transport_up{transport="modems",bind="sim1"}')).toBe(0);
    const ready = await fetch(`${adminUrl}/ready`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { reasons: string[] }).reasons).toEqual([
      expect.stringMatching(/^no transport is up: modems /),
      expect.stringMatching(/^route "" \(every number\) has no transport up to carry it: transport modems: not bound \((binding|down: no modem ready)\)$/),
    ]);
  });
});
