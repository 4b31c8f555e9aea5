/**
 * The engine alone counts attempts. A modem (the emulator on a socat pty) that
 * answers every AT+CMGS with a temporary +CMS ERROR gets each part exactly engine.maxAttempts
 * times in all; before, the modem worker retried maxAttemptsPerPart times inside each engine
 * attempt (9 sends with 3 and 3).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ModemTransport } from '../../src/transports/modem/index.js';
import { ModemEmulator } from '../support/modem-emulator/index.js';
import { startEngineHarness, waitFor, type EngineHarness } from './engine-harness.js';

const MAX_ATTEMPTS = 3;

let harness: EngineHarness | undefined;
let modems: ModemTransport | undefined;
let emulator: ModemEmulator | undefined;
let dir: string | undefined;

afterEach(async () => {
  await harness?.close();
  await modems?.stop(500);
  await emulator?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  harness = undefined;
  modems = undefined;
  emulator = undefined;
  dir = undefined;
});

it(`sends a part refused with a lasting temporary +CMS ERROR exactly engine.maxAttempts (${MAX_ATTEMPTS}) times`, async () => {
  dir = mkdtempSync(join(tmpdir(), 'smsgate-modem-attempts-'));
  emulator = new ModemEmulator({ dir, name: 'm0', statusReports: false });
  await emulator.plugIn();
  // +CMS ERROR 42 (congestion) is temporary (TS 24.011 §8.2.5.4); the emulator gives it to every submit.
  emulator.setSubmitMode('temporary');
  modems = new ModemTransport(
    {
      name: 'modems',
      type: 'modem',
      devices: [{ path: emulator.path, messagesPerMinute: 6000 }],
      retryDelayMs: 10,
      // The old inner retry's setting: no longer multiplies the engine's attempts.
      maxAttemptsPerPart: 3,
      reopenBackoffMs: [100],
      healthIntervalMs: 60_000,
    },
    { registrationPollMs: 50 },
  );
  harness = await startEngineHarness({ transports: [modems], engine: { maxAttempts: MAX_ATTEMPTS } });
  const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });

  const [recipient] = await waitFor(() => harness!.recipients(campaignId), (rows) => rows.every((r) => r.status !== 'pending'));
  expect(recipient).toMatchObject({ status: 'undelivered', last_status: 'CMS_ERROR_42' });
  expect(harness.parts(campaignId)[0]).toMatchObject({ state: 'undelivered', attempts: MAX_ATTEMPTS });
  expect(emulator.submitPdusReceived).toBe(MAX_ATTEMPTS);
  expect(emulator.commands.filter((c) => c.startsWith('AT+CMGS=')).length).toBe(MAX_ATTEMPTS);
  expect(emulator.protocolErrors).toEqual([]);
});
