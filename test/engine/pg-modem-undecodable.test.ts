/**
 * On PostgreSQL the engine records a PDU the modem path cannot
 * decode in PostgreSQL's undecodable_pdus (before the modem deletes it from the SIM), over a socat
 * pty to the modem emulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ModemTransport } from '../../src/transports/modem/index.js';
import { ModemEmulator, buildDeliverPdu } from '../support/modem-emulator/index.js';
import { usePostgresSuite } from '../support/postgres-suite.js';
import { startPgEngine, until } from './pg-engine-harness.js';

const suite = usePostgresSuite();

it('stores a PDU the modem cannot decode in PostgreSQL, then the modem deletes it from the SIM', async () => {
  const { pool } = await suite.open();
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-pg-undecodable-'));
  const emulator = new ModemEmulator({ dir, name: 'sim0', statusReports: false });
  suite.afterThisTest(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await emulator.plugIn();
  const transport = new ModemTransport(
    { name: 'modems', type: 'modem', devices: [{ path: emulator.path, messagesPerMinute: 6000 }], reopenBackoffMs: [100, 200], healthIntervalMs: 60_000, registrationTimeoutMs: 5_000 },
    { registrationPollMs: 50 },
  );
  // The engine stops (and stops its transport) after the test, before the emulator closes.
  await startPgEngine(suite, { pool, transports: [transport] });

  // Two octets short of its user data: PDU_TRUNCATED.
  const hex = buildDeliverPdu({ smsc: '353870000000', from: '353861234567', text: 'cut short', at: new Date() }).hex.slice(0, -4);
  const index = emulator.storeRawPdu(hex, hex.length / 2 - 8, '+CMTI');
  await until(async () => emulator.storedCount, (n) => n === 0);
  const { rows } = await pool.query<{ transport: string; device: string; hex: string; reason_code: string }>(
    'SELECT transport, device, hex, reason_code FROM undecodable_pdus');
  expect(rows).toEqual([{ transport: 'modems', device: 'sim0', hex, reason_code: 'PDU_TRUNCATED' }]);
  expect(emulator.deleted).toEqual([index]);
  expect(emulator.protocolErrors).toEqual([]);
});
