/**
 * The engine alone retries a temporary command_status. An SMSC (ours,
 * over loopback) refusing every submit_sm gets each part exactly engine.maxAttempts times, and an
 * ESME_RTHROTTLED refusal's retryAfterMs (the bind's pause, 1 s first) holds the retry back at least
 * that long, whatever the engine's shorter backoff says.
 */
import { afterEach, expect, it } from 'vitest';
import { COMMAND_STATUS_CODE } from '../../src/transports/smpp/command-status.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { TestSmsc } from '../support/smsc/test-smsc.js';
import { smppConfig } from '../transports/smpp/helpers.js';
import { startEngineHarness, waitFor, type EngineHarness } from './engine-harness.js';

let harness: EngineHarness | undefined;
let smsc: TestSmsc | undefined;

afterEach(async () => {
  await harness?.close();
  await smsc?.stop();
  harness = undefined;
  smsc = undefined;
});

/** Starts the engine over one SMPP transport whose SMSC answers every submit_sm with `commandStatus`. */
async function refusingEverySubmit(commandStatus: number, maxAttempts: number): Promise<{ campaignId: string; submitTimesMs: number[] }> {
  const submitTimesMs: number[] = [];
  smsc = await TestSmsc.start({
    onSubmit: () => {
      submitTimesMs.push(Date.now());
      return { kind: 'status', commandStatus };
    },
  });
  const transport = new SmppTransport(smppConfig(smsc));
  // The harness's backoff is 10 ms doubling to 100 ms: far below the throttle pause.
  harness = await startEngineHarness({ transports: [transport], engine: { maxAttempts } });
  const campaignId = harness.seedCampaign({ clientId: harness.seedClient(), msisdns: ['353871234567'] });
  await waitFor(() => harness!.recipients(campaignId), (rows) => rows.every((r) => r.status !== 'pending'));
  return { campaignId, submitTimesMs };
}

it('sends a part the SMSC refuses with ESME_RSYSERR (temporary) exactly engine.maxAttempts (4) times', async () => {
  const { campaignId, submitTimesMs } = await refusingEverySubmit(COMMAND_STATUS_CODE.ESME_RSYSERR, 4);
  expect(submitTimesMs).toHaveLength(4);
  expect(harness!.recipients(campaignId)[0]).toMatchObject({ status: 'undelivered', last_status: 'ESME_RSYSERR' });
  expect(harness!.parts(campaignId)[0]).toMatchObject({ state: 'undelivered', attempts: 4 });
});

it('retries an ESME_RTHROTTLED part no sooner than its retryAfterMs (1 s), maxAttempts (2) times in all', async () => {
  const { campaignId, submitTimesMs } = await refusingEverySubmit(COMMAND_STATUS_CODE.ESME_RTHROTTLED, 2);
  expect(submitTimesMs).toHaveLength(2);
  expect(submitTimesMs[1]! - submitTimesMs[0]!).toBeGreaterThanOrEqual(1_000);
  expect(harness!.parts(campaignId)[0]).toMatchObject({ state: 'undelivered', attempts: 2, last_status: 'ESME_RTHROTTLED' });
});
