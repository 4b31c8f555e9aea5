/**
 * SMPP throughput on loopback: submit_sm per second through SmppTransport at 1 and 4 binds and
 * window 1, 10 and 50, side by side with a bare `smpp` package client sending the same PDUs (the
 * library's ceiling on this machine), then receipts parsed per second. Prints a table; asserts
 * nothing. Each run lasts RUN_MS; bare and smsgate runs alternate ROUNDS times.
 *
 *   npm run bench:smpp            (SMPP_BENCH_RUN_MS=3000 SMPP_BENCH_ROUNDS=3 for steadier figures)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import smpp from 'smpp';
import type { PDU, Session } from 'smpp';
import { parseReceiptText, parseSmppReceipt } from '../../src/receipts/index.js';
import { planMessage } from '../../src/sms/index.js';
import { SmppTransport } from '../../src/transports/smpp/index.js';
import { planSubmits } from '../../src/transports/smpp/submit-pdu.js';
import type { OutboundMessage } from '../../src/transports/transport.js';

/** Where the SMSC listens; it runs in a child process (smsc-process.ts). */
interface SmscAddress {
  address: { host: string; port: number };
}

async function startSmscProcess(): Promise<SmscAddress & { stop(): Promise<void> }> {
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

const RUN_MS = Number(process.env['SMPP_BENCH_RUN_MS'] ?? 1_000);
/** Bare and smsgate runs alternate this many times; the best of each is printed (the machine is shared, so the best run is the least disturbed one). */
const ROUNDS = Number(process.env['SMPP_BENCH_ROUNDS'] ?? 2);
const BIND_COUNTS = [1, 4];
const WINDOWS = [1, 10, 50];

const plan = planMessage('smsgate bench: hello from the SMPP transport');
const message: OutboundMessage = {
  messageKey: 'bench',
  destination: '353871234567',
  sender: { value: 'smsgate', kind: 'alphanumeric', ton: 5, npi: 0 },
  encoding: plan.encoding,
  segments: plan.segments,
  concatReference: 1,
};

async function viaTransport(smsc: SmscAddress, binds: number, window: number): Promise<number> {
  const transport = new SmppTransport({
    name: 'bench', type: 'smpp', ...smsc.address, systemId: 'esme', password: 'secret',
    bindMode: 'transceiver', binds, window, maxPerSecond: 1e9, enquireLinkIntervalMs: 60_000,
  });
  transport.setHandlers({ onReceipt: async () => undefined, onInbound: async () => undefined, onState: () => undefined });
  await transport.start();
  let accepted = 0;
  const startedMs = Date.now();
  const deadlineMs = startedMs + RUN_MS;
  // The engine's queue runs windowSize submits at once; so does this driver.
  await Promise.all(
    Array.from({ length: transport.windowSize }, async () => {
      while (Date.now() < deadlineMs) {
        const [outcome] = await transport.submit(message);
        if (outcome?.kind === 'accepted') accepted++;
      }
    }),
  );
  const elapsedMs = Date.now() - startedMs;
  await transport.stop(1_000);
  return (accepted * 1000) / elapsedMs;
}

function bindBare(smsc: SmscAddress): Promise<Session> {
  return new Promise((resolve, reject) => {
    const session = smpp.connect({ ...smsc.address }, () => {
      session.socket.setNoDelay(true);
      session.send(new smpp.PDU('bind_transceiver', { system_id: 'esme', password: 'secret', interface_version: 0x34 }), (pdu: PDU) =>
        pdu.command_status === 0 ? resolve(session) : reject(new Error(`bind ${pdu.command_status}`)),
      );
    });
    session.on('error', reject);
  });
}

async function viaBareClient(smsc: SmscAddress, binds: number, window: number): Promise<number> {
  const planned = planSubmits(message, {
    concatenation: 'udh8', dataCoding: { gsm7: 0 }, registeredDelivery: 1, priority: 0, systemType: '',
  });
  if (!planned.ok) throw new Error(planned.detail);
  const fields = planned.submits[0]!.fields as unknown as Record<string, unknown>;
  const sessions = await Promise.all(Array.from({ length: binds }, () => bindBare(smsc)));
  let accepted = 0;
  const startedMs = Date.now();
  const deadlineMs = startedMs + RUN_MS;
  await Promise.all(
    sessions.flatMap((session) =>
      Array.from({ length: window }, async () => {
        while (Date.now() < deadlineMs) {
          const ok = await new Promise<boolean>((resolve) => {
            session.send(new smpp.PDU('submit_sm', { ...fields }), (pdu: PDU) => resolve(pdu.command_status === 0));
          });
          if (ok) accepted++;
        }
      }),
    ),
  );
  const elapsedMs = Date.now() - startedMs;
  for (const session of sessions) session.destroy();
  return (accepted * 1000) / elapsedMs;
}

function receiptsPerSecond(): { text: number; full: number } {
  const texts = Array.from(
    { length: 1_000 },
    (_, i) => `id:${4_000_000_000 + i} sub:001 dlvrd:001 submit date:2311211530 done date:2311211531 stat:DELIVRD err:000 text:hello ${i}`,
  );
  const measure = (work: (text: string) => unknown): number => {
    let count = 0;
    const startedMs = Date.now();
    while (Date.now() - startedMs < RUN_MS) {
      for (const text of texts) work(text);
      count += texts.length;
    }
    return (count * 1000) / (Date.now() - startedMs);
  };
  return { text: measure(parseReceiptText), full: measure((text) => parseSmppReceipt({ text }, 'as-is')) };
}

function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US').padStart(9);
}

async function main(): Promise<void> {
  const smsc = await startSmscProcess();
  console.log(`SMPP submit_sm per second on loopback (best of ${ROUNDS} alternating runs of ${RUN_MS} ms, test SMSC in a child process)`);
  console.log('binds  window   smsgate   bare smpp   ratio');
  for (const binds of BIND_COUNTS) {
    for (const window of WINDOWS) {
      let bare = 0;
      let ours = 0;
      for (let round = 0; round < ROUNDS; round++) {
        bare = Math.max(bare, await viaBareClient(smsc, binds, window));
        ours = Math.max(ours, await viaTransport(smsc, binds, window));
      }
      console.log(`${String(binds).padStart(5)}  ${String(window).padStart(6)} ${fmt(ours)}   ${fmt(bare)}   ${((ours / bare) * 100).toFixed(0).padStart(4)}%`);
    }
  }
  await smsc.stop();
  const receipts = receiptsPerSecond();
  console.log(`receipts parsed per second: parseReceiptText ${fmt(receipts.text)}, parseSmppReceipt ${fmt(receipts.full)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
