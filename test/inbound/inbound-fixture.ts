/**
 * A real SQLite store in a temp directory with an InboundService on it, and helpers to read what
 * it stored. Each test closes its store and removes the directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InboundService } from '../../src/inbound/inbound-service.js';
import { silentLogger } from '../../src/common/log.js';
import { openStore, type Store } from '../../src/store/sqlite/database.js';
import { sqliteStorePorts } from '../../src/store/store-ports.js';

export interface StoredInbound {
  public_id: string;
  transport: string;
  sender: string;
  recipient: string;
  text: string;
  raw: string;
  received_at: number;
  client_id: number | null;
  incomplete: number;
}

export interface InboundRig {
  dir: string;
  path: string;
  store: Store;
  service: InboundService;
  clock: { nowMs: number };
  wakes: number;
  messages(): StoredInbound[];
  partsLeft(): number;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export async function inboundRig(options: { reassemblyTimeoutMs?: number } = {}): Promise<InboundRig> {
  const dir = mkdtempSync(join(tmpdir(), 'smsgate-inbound-'));
  const path = join(dir, 'smsgate.sqlite');
  const clock = { nowMs: Date.UTC(2026, 0, 15, 12, 0, 0) };
  const open = async (): Promise<{ store: Store; service: InboundService }> => {
    const store = await openStore({ path });
    const service = new InboundService({
      store: sqliteStorePorts(store).inbound,
      logger: silentLogger(),
      now: () => clock.nowMs,
      wakeWebhooks: () => {
        rig.wakes += 1;
      },
      ...(options.reassemblyTimeoutMs === undefined ? {} : { reassemblyTimeoutMs: options.reassemblyTimeoutMs }),
    });
    return { store, service };
  };
  const first = await open();
  const rig: InboundRig = {
    dir,
    path,
    store: first.store,
    service: first.service,
    clock,
    wakes: 0,
    messages: () => rig.store.db.prepare('SELECT * FROM inbound_messages ORDER BY id').all() as StoredInbound[],
    partsLeft: () => rig.store.db.prepare('SELECT COUNT(*) FROM inbound_parts').pluck().get() as number,
    async reopen() {
      rig.service.stop();
      await rig.store.close();
      const next = await open();
      rig.store = next.store;
      rig.service = next.service;
    },
    async close() {
      rig.service.stop();
      await rig.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return rig;
}
