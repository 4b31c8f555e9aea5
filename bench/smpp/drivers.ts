/**
 * The two sides of the SMPP bench, driven the same way: the same submit_sm fields, `window`
 * submits in flight per bind, against the same test SMSC (in a child process, so it does not
 * share this event loop). A run stops after `durationMs` or after `parts` submits, whichever is
 * given. Each run reports the wall-clock rate and the CPU time this process spent per part
 * (process.cpuUsage): the SMSC is elsewhere, so that is the ESME's own cost, which load from
 * other processes barely changes.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import smpp from 'smpp';
import type { PDU, Session } from 'smpp';
import { planMessage } from '../../src/sms/index.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { planSubmits } from '../../src/transports/smpp/submit-pdu.js';
import type { OutboundMessage } from '../../src/transports/transport.js';

export interface SmscAddress {
  host: string;
  port: number;
}

export interface RunLimit {
  durationMs?: number;
  parts?: number;
}

export interface RunResult {
  parts: number;
  partsPerSecond: number;
  cpuMicrosPerPart: number;
}

const SYSTEM_ID = 'esme';
const PASSWORD = 'secret';

/** Starts smsc-process.js and resolves with its address once it listens. */
export async function startSmscProcess(): Promise<{ address: SmscAddress; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./smsc-process.js', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const { port } = JSON.parse(line.toString('utf8')) as { port: number };
  return {
    address: { host: '127.0.0.1', port },
    async stop() {
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

const plan = planMessage('smsgate bench: hello from the SMPP transport');

/** A fresh message per submit, as the engine sends one per recipient. */
function benchMessage(index: number): OutboundMessage {
  return {
    messageKey: `bench-${index}`,
    destination: '353871234567',
    sender: { value: 'smsgate', kind: 'alphanumeric', ton: 5, npi: 0 },
    encoding: plan.encoding,
    segments: plan.segments,
    concatReference: index & 0xffff,
  };
}

/** Runs `lanes` loops that each call `sendOne` until the limit, and measures them. */
async function drive(lanes: number, limit: RunLimit, sendOne: (index: number, lane: number) => Promise<boolean>): Promise<RunResult> {
  const maxParts = limit.parts ?? Number.POSITIVE_INFINITY;
  let issued = 0;
  let accepted = 0;
  const startedMs = Date.now();
  const deadlineMs = limit.durationMs === undefined ? Number.POSITIVE_INFINITY : startedMs + limit.durationMs;
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (issued < maxParts && Date.now() < deadlineMs) {
        if (await sendOne(issued++, lane)) accepted++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  const elapsedMs = Date.now() - startedMs;
  return {
    parts: accepted,
    partsPerSecond: (accepted * 1000) / elapsedMs,
    cpuMicrosPerPart: accepted === 0 ? 0 : (cpu.user + cpu.system) / accepted,
  };
}

export async function measureTransport(smsc: SmscAddress, binds: number, window: number, limit: RunLimit): Promise<RunResult> {
  const transport = new SmppTransport({
    name: 'bench', type: 'smpp', ...smsc, systemId: SYSTEM_ID, password: PASSWORD,
    bindMode: 'transceiver', binds, window, maxPerSecond: 1e9, enquireLinkIntervalMs: 60_000,
  });
  transport.setHandlers({ onReceipt: async () => undefined, onInbound: async () => undefined, onState: () => undefined });
  await transport.start();
  // The engine's queue runs windowSize submits at once; so does this driver.
  const result = await drive(transport.windowSize, limit, async (index) => {
    const [outcome] = await transport.submit(benchMessage(index));
    return outcome?.kind === 'accepted';
  });
  await transport.stop(1_000);
  return result;
}

function bindBare(smsc: SmscAddress): Promise<Session> {
  return new Promise((resolve, reject) => {
    const session = smpp.connect({ ...smsc }, () => {
      session.socket.setNoDelay(true);
      session.send(new smpp.PDU('bind_transceiver', { system_id: SYSTEM_ID, password: PASSWORD, interface_version: 0x34 }), (pdu: PDU) =>
        pdu.command_status === 0 ? resolve(session) : reject(new Error(`bind ${pdu.command_status}`)),
      );
    });
    session.on('error', reject);
  });
}

/** The library's ceiling: the same fields, encoded once, sent `window` at a time per session. */
export async function measureBare(smsc: SmscAddress, binds: number, window: number, limit: RunLimit): Promise<RunResult> {
  const planned = planSubmits(benchMessage(0), {
    concatenation: 'udh8', dataCoding: { gsm7: 0 }, registeredDelivery: 1, priority: 0, systemType: '',
  });
  if (!planned.ok) throw new Error(planned.detail);
  const fields = planned.submits[0]!.fields as unknown as Record<string, unknown>;
  const sessions = await Promise.all(Array.from({ length: binds }, () => bindBare(smsc)));
  // Lane i always sends on session i % binds: `window` submits in flight per session.
  const result = await drive(binds * window, limit, (_index, lane) => {
    const session = sessions[lane % binds]!;
    return new Promise<boolean>((resolve) => {
      session.send(new smpp.PDU('submit_sm', { ...fields }), (pdu: PDU) => resolve(pdu.command_status === 0));
    });
  });
  for (const session of sessions) session.destroy();
  return result;
}
