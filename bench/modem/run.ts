/**
 * bench:modem — parts per minute through 1 and 4 emulated modems (socat ptys, the real AT engine
 * and serialport), against the theoretical limit: the sum of the devices' rates over the time
 * each was up. In the 4-modem run one modem is unplugged mid-run and plugged back in; every
 * part must still get exactly one outcome (none lost).
 *
 * Time is scaled 10x: each AT+CMGS takes 200-400 ms instead of 2-4 s, and the generic profile's
 * 12 messages per minute becomes 120 per scaled minute. Figures are printed in scaled and real
 * terms. Goal: within 5% of the limit. Asserts nothing (the machine is shared).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadProfile } from '../../src/transports/modem/profile.js';
import { ModemTransport } from '../../src/transports/modem/index.js';
import type { OutboundMessage, PartOutcome } from '../../src/transports/transport.js';
import { planMessage } from '../../src/sms/index.js';
import { ModemEmulator } from '../../test/support/modem-emulator/index.js';

const TIME_SCALE = 10;
const RUN_MS = 25_000;
const SUBMIT_DELAY_MS: readonly [number, number] = [2_000 / TIME_SCALE, 4_000 / TIME_SCALE];

interface RunResult {
  devices: number;
  submittedParts: number;
  accepted: number;
  resultUnknown: number;
  otherFailures: number;
  unresolved: number;
  partsPerScaledMinute: number;
  limitPerScaledMinute: number;
  nominalLimitPerScaledMinute: number;
}

function message(i: number): OutboundMessage {
  const plan = planMessage(`Bench message ${i}: your appointment is confirmed for tomorrow at 10:30.`);
  return {
    messageKey: `bench-${i}`,
    destination: `3538700${String(i % 100000).padStart(5, '0')}`,
    sender: { value: 'Bench', kind: 'alphanumeric', ton: 5, npi: 0 },
    encoding: plan.encoding,
    segments: plan.segments,
    concatReference: i & 0xff,
  };
}

async function runWith(deviceCount: number, unplugOne: boolean): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-modem-'));
  const perMinute = loadProfile('generic').messagesPerMinute * TIME_SCALE;
  const emulators = Array.from({ length: deviceCount }, (_, i) => new ModemEmulator({ dir, name: `bench${i}`, timing: { submitDelayMs: SUBMIT_DELAY_MS } }));
  await Promise.all(emulators.map((e) => e.plugIn()));
  const transport = new ModemTransport(
    {
      name: 'bench',
      type: 'modem',
      devices: emulators.map((e) => ({ path: e.path, profile: 'generic', messagesPerMinute: perMinute })),
      reopenBackoffMs: [200, 500],
      statusReports: false,
      healthIntervalMs: 60_000,
    },
    { registrationPollMs: 50 },
  );
  transport.setHandlers({ onReceipt: async () => undefined, onInbound: async () => undefined, onState: () => undefined });
  await transport.start();

  const outcomes: PartOutcome[] = [];
  const acceptedAtMs: number[] = [];
  let submitted = 0;
  let outstanding = 0;
  let running = true;
  const startMs = Date.now();
  const endMs = startMs + RUN_MS;
  const pending: Promise<void>[] = [];

  // Capacity actually available: each device's rate over the time it was ready.
  let capacityParts = 0;
  let lastSampleMs = startMs;
  const sampler = setInterval(() => {
    const now = Math.min(Date.now(), endMs);
    const ready = transport.devices().filter((d) => d.state === 'ready').length;
    capacityParts += (ready * perMinute * (now - lastSampleMs)) / 60_000;
    lastSampleMs = now;
  }, 20);

  const feeder = (async () => {
    while (running) {
      // Keep a backlog so no device waits for work, without queueing the whole run up front.
      while (outstanding < deviceCount * 4 && running) {
        const i = submitted++;
        outstanding++;
        pending.push(
          transport.submit(message(i)).then((result) => {
            outstanding--;
            for (const outcome of result) {
              outcomes.push(outcome);
              if (outcome.kind === 'accepted') acceptedAtMs.push(Date.now());
            }
          }),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();

  if (unplugOne) {
    await new Promise((resolve) => setTimeout(resolve, RUN_MS / 2));
    const victim = emulators[deviceCount - 1] as ModemEmulator;
    // Pull the plug while a submit is on the air, the case where the result is lost.
    while (!victim.submitInProgress) await new Promise((resolve) => setTimeout(resolve, 5));
    await victim.unplug();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await victim.plugIn();
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, endMs - Date.now())));
  running = false;
  await feeder;
  clearInterval(sampler);
  await transport.stop(2_000);
  await Promise.all(pending);
  for (const e of emulators) await e.close();
  rmSync(dir, { recursive: true, force: true });

  const inWindow = acceptedAtMs.filter((t) => t <= endMs).length;
  const accepted = outcomes.filter((o) => o.kind === 'accepted').length;
  const resultUnknown = outcomes.filter((o) => o.kind === 'temporary' && o.status === 'RESULT_UNKNOWN').length;
  const stoppedOrOther = outcomes.length - accepted - resultUnknown;
  return {
    devices: deviceCount,
    submittedParts: submitted,
    accepted,
    resultUnknown,
    otherFailures: stoppedOrOther,
    unresolved: submitted - outcomes.length,
    partsPerScaledMinute: (inWindow * 60_000) / RUN_MS,
    limitPerScaledMinute: (capacityParts * 60_000) / RUN_MS,
    nominalLimitPerScaledMinute: deviceCount * perMinute,
  };
}

function report(label: string, r: RunResult): void {
  const ratio = r.partsPerScaledMinute / r.limitPerScaledMinute;
  console.log(
    [
      `${label}`,
      `  throughput: ${r.partsPerScaledMinute.toFixed(1)} parts/scaled-min = ${(r.partsPerScaledMinute / TIME_SCALE).toFixed(2)} parts/real-min`,
      `  limit (rates x uptime): ${r.limitPerScaledMinute.toFixed(1)} parts/scaled-min (nominal ${r.nominalLimitPerScaledMinute}); achieved ${(ratio * 100).toFixed(1)}% ${ratio >= 0.95 ? '(within 5%)' : '(MORE than 5% below)'}`,
      `  parts submitted ${r.submittedParts}: accepted ${r.accepted}, temporary RESULT_UNKNOWN ${r.resultUnknown}, other (not-sent: stop/down) ${r.otherFailures}, without outcome ${r.unresolved}`,
    ].join('\n'),
  );
}

console.log(`bench:modem — time scaled ${TIME_SCALE}x: AT+CMGS ${SUBMIT_DELAY_MS[0]}-${SUBMIT_DELAY_MS[1]} ms, runs of ${RUN_MS / 1000} s (= ${((RUN_MS * TIME_SCALE) / 60_000).toFixed(2)} real minutes)`);
report('1 modem', await runWith(1, false));
report('4 modems, one unplugged mid-run (during an AT+CMGS) for 3 s then plugged back in', await runWith(4, true));
