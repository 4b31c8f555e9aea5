/**
 * Numbering.country and scheduling.timeZone are settings with the spec's defaults
 * (IE numbering, Europe/Dublin). A gateway configured for France and New York normalises French
 * national numbers and reads sendAt in New York time, through the HTTP API and the processor; a bad
 * value is a config error naming the key and the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createGateway, resolveConfigFromObject } from '../../src/index.js';
import { normalizeMsisdn, NUMBERING_PLANS } from '../../src/sms/index.js';
import { fetchChecked } from '../support/openapi-check.js';

const dir = mkdtempSync(join(tmpdir(), 'smsgate-numbering-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('numbering plans', () => {
  it.each([
    ['FR', '0612345678', '33612345678'],
    ['FR', '+330612345678', '33612345678'],
    ['FR', '0871234567', '33871234567'],
    ['GB', '02071234567', '442071234567'],
    ['DE', '015112345678', '4915112345678'],
    ['ES', '612345678', '34612345678'],
    ['US', '2125550123', '12125550123'],
    ['US', '12125550123', '12125550123'],
    ['NL', '0612345678', '31612345678'],
    ['IT', '3123456789', '393123456789'],
  ] as const)('%s: %s is stored as %s', (country, raw, stored) => {
    expect(normalizeMsisdn(raw, NUMBERING_PLANS[country])).toEqual({ ok: true, msisdn: stored });
  });

  it('IE, the default, is the spec rule: Irish national numbers and UK mobiles', () => {
    expect(normalizeMsisdn('0871234567')).toEqual({ ok: true, msisdn: '353871234567' });
    expect(normalizeMsisdn('07123456789')).toEqual({ ok: true, msisdn: '447123456789' });
    expect(normalizeMsisdn('0612345678', NUMBERING_PLANS.IE)).toEqual({ ok: true, msisdn: '353612345678' });
  });
});

describe('config', () => {
  it('defaults to numbering.country IE and scheduling.timeZone Europe/Dublin', () => {
    const config = resolveConfigFromObject({}, 'defaults.json', {});
    expect(config.numbering).toEqual({ country: 'IE' });
    expect(config.scheduling).toEqual({ timeZone: 'Europe/Dublin' });
  });

  it('refuses an unknown country and a zone luxon does not know, naming the key and the file', () => {
    expect(() => resolveConfigFromObject({ numbering: { country: 'XX' } }, 'config/prod.json', {})).toThrow(/^config\/prod\.json: numbering\.country: must be one of "IE", "GB"/);
    expect(() => resolveConfigFromObject({ scheduling: { timeZone: 'Mars/Olympus_Mons' } }, 'config/prod.json', {}))
      .toThrow('config/prod.json: scheduling.timeZone: "Mars/Olympus_Mons" is not an IANA time zone (e.g. Europe/Dublin)');
    expect(() => resolveConfigFromObject({ scheduling: { zone: 'UTC' } }, 'config/prod.json', {})).toThrow('config/prod.json: scheduling.zone: unknown key');
  });
});

describe('a gateway configured for France and New York', () => {
  it('stores French national numbers as 33... and reads sendAt as New York wall time', async () => {
    const config = resolveConfigFromObject({
      database: { path: join(dir, 'fr.sqlite') }, api: { host: '127.0.0.1', port: 0 },
      transports: [{ name: 'sim', type: 'simulator' }],
      numbering: { country: 'FR' }, scheduling: { timeZone: 'America/New_York' },
    }, 'fr.json', {});
    const gateway = await createGateway(config);
    await gateway.auth.createClient({ name: 'fr' });
    await gateway.auth.createUser({ clientName: 'fr', username: 'fr-admin', password: 'pw', isAdmin: true });
    const token = await gateway.auth.createPersonalAccessToken('fr-admin');
    await gateway.start();
    try {
      const { port } = gateway.address()!;
      const baseUrl = `http://127.0.0.1:${port}`;
      const posted = await fetchChecked(`${baseUrl}/v1/campaign`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          text: 'Bonjour', from: 'Acme', sendAt: '2031-07-01T09:00',
          // The second is the first in international form: a duplicate after normalisation.
          recipientInfo: [{ msisdn: '0612345678', ClientReference: 'a' }, { msisdn: '+33612345678', ClientReference: 'b' }, { msisdn: '0798765432' }],
        }),
      });
      expect(posted.status).toBe(202);
      const { id } = (await posted.json()) as { id: string };
      const deadline = Date.now() + 20_000;
      let summary: Response | undefined;
      while (Date.now() < deadline) {
        summary = await fetchChecked(`${baseUrl}/v1/campaign/${id}`, { headers: { authorization: `Bearer ${token}` } });
        if (summary.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await summary!.json()).toEqual({ totalSent: 2, delivered: 0, undelivered: 0, pending: 2 });
      const rows = gateway.store.db.prepare('SELECT msisdn, client_reference FROM recipients WHERE campaign_id = ? ORDER BY id').all(id);
      expect(rows).toEqual([{ msisdn: '33612345678', client_reference: 'a' }, { msisdn: '33798765432', client_reference: null }]);
      // 09:00 EDT (UTC-4) on 1 July is 13:00 UTC; in Dublin (IST, UTC+1) it would have been 08:00 UTC.
      const campaign = gateway.store.db.prepare('SELECT send_at FROM campaigns WHERE id = ?').get(id) as { send_at: number };
      expect(new Date(campaign.send_at).toISOString()).toBe('2031-07-01T13:00:00.000Z');
    } finally {
      await gateway.stop();
    }
  });
});
