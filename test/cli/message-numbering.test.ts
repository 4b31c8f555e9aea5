/**
 * `smsgate message show --msisdn N` normalises N with the deployment's numbering.country,
 * as the API did when it stored the recipient: under US, the national 2125550123 was
 * stored as 12125550123, and the operator typing it the national way must find it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/commands/message.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { captureCliOutput } from '../support/cli-output.js';

describe('smsgate message show under numbering.country', () => {
  let dir: string;
  let store: Store;
  const CAMPAIGN_ID = '00000000-0000-4000-8000-000000000013';

  const configFor = (country: string): string => {
    const path = join(dir, `${country}.json`);
    writeFileSync(path, JSON.stringify({
      database: { path: join(dir, 'gate.sqlite') },
      transports: [{ name: 'sim', type: 'simulator' }],
      numbering: { country },
      logging: { level: 'silent' },
    }));
    return path;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smsgate-message-numbering-'));
    store = await openStore({ path: join(dir, 'gate.sqlite') });
    const clientId = Number(store.db.prepare(`INSERT INTO clients (name, created_at) VALUES ('u', 0)`).run().lastInsertRowid);
    store.db.prepare(`INSERT INTO campaigns (id, client_id, state, name, sender, text, created_at) VALUES (?, ?, 'ready', 'n', 'UU', 't', 0)`).run(CAMPAIGN_ID, clientId);
    // What the API stores for 2125550123 under numbering.country US (README: `2125550123` → `12125550123`).
    store.db.prepare('INSERT INTO recipients (campaign_id, msisdn) VALUES (?, ?)').run(CAMPAIGN_ID, '12125550123');
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds a US number typed the national way when numbering.country is US', async () => {
    const result = await captureCliOutput(() => run(['show', '--msisdn', '2125550123', '--json', '--config', configFor('US')]));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([expect.objectContaining({ campaign: CAMPAIGN_ID, msisdn: '12125550123' })]);
  });

  it('keeps the spec default (IE) when numbering.country is IE: the same digits are another number', async () => {
    const result = await captureCliOutput(() => run(['show', '--msisdn', '2125550123', '--config', configFor('IE')]));
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'smsgate: no message to 2125550123\n' });
  });

  it('refuses a malformed number with the usage line, exit 2', async () => {
    const result = await captureCliOutput(() => run(['show', '--msisdn', '21x', '--config', configFor('US')]));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: smsgate message show --msisdn N');
  });
});
