/**
 * `npm run bench:inbound`: mobile-originated messages stored per second by InboundService on a real
 * SQLite file (synchronous FULL, as serve runs it), each part in its own transaction as a transport
 * hands it over (it is acknowledged to the SMSC or deleted from the SIM only after that commit):
 * one-part messages routed to a client with an inbound webhook (message + outbox row), and 3-part
 * UCS-2 messages whose parts arrive 3, 1, 2. Prints a table; no assertions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InboundAdmin } from '../../src/inbound/inbound-admin.js';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';
import type { InboundMessage } from '../../src/transports/transport.js';

const RUN_MS = 2_000;

interface Figure {
  case: string;
  parts: number;
  messages: number;
  seconds: number;
}

async function withStore<T>(body: (store: Store, service: InboundService) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-bench-inbound-'));
  const store = await openStore({ path: join(dir, 'bench.sqlite'), synchronous: 'FULL' });
  try {
    store.db.prepare(`INSERT INTO clients (name, webhook_url, created_at, inbound_webhook_url) VALUES ('acme', NULL, 0, 'http://127.0.0.1:9/inbound')`).run();
    const ports = sqliteStorePorts(store);
    await new InboundAdmin(ports.inbound).addRoute('acme', '50123');
    const service = new InboundService({ store: ports.inbound, logger: silentLogger(), wakeWebhooks: () => undefined });
    return await body(store, service);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function onePart(i: number): InboundMessage {
  return { from: `35386${String(i % 10_000_000).padStart(7, '0')}`, to: '50123', text: `Reply ${i}`, receivedAt: '', raw: `Reply ${i}` };
}

function threeParts(i: number): InboundMessage[] {
  const ucs2 = (text: string): string => Buffer.from(text, 'utf16le').swap16().toString('hex');
  const from = `44770${String(i % 1_000_000).padStart(6, '0')}`;
  return [3, 1, 2].map((sequence) => ({
    from, to: '50123', text: '', receivedAt: '', raw: '',
    content: { coding: 'ucs2' as const, octetsHex: ucs2(`part ${sequence} of message ${i} \u{1F600} `) },
    concat: { scheme: 'udh8' as const, reference: i & 0xff, total: 3, sequence },
  }));
}

async function measure(name: string, partsPerMessage: number, make: (i: number) => InboundMessage[]): Promise<Figure> {
  return withStore(async (_store, service) => {
    const start = process.hrtime.bigint();
    let messages = 0;
    let elapsedMs = 0;
    while (elapsedMs < RUN_MS) {
      for (const part of make(messages)) await service.receive('bench', part);
      messages += 1;
      elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
    }
    return { case: name, parts: messages * partsPerMessage, messages, seconds: elapsedMs / 1000 };
  });
}

const figures = [
  await measure('1-part, routed, webhook queued', 1, (i) => [onePart(i)]),
  await measure('3-part UCS-2, parts 3-1-2', 3, threeParts),
];
console.log('| case | parts/s | messages/s | µs/part |');
console.log('|---|---|---|---|');
for (const f of figures) {
  console.log(`| ${f.case} | ${Math.round(f.parts / f.seconds).toLocaleString('en')} | ${Math.round(f.messages / f.seconds).toLocaleString('en')} | ${((f.seconds * 1e6) / f.parts).toFixed(1)} |`);
}
